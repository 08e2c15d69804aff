"""Inputs, reference and baselines for examples/gemm_fp8_staged.cake (`cakec run` reads these):
examples/gemm_fp8.py's, since the staged schedule takes the same parameters and computes the
same result; its shapes are those whose C rows a TMA store can address (N % 8 == 0, 16-byte
rows), plus aligned tails on every side."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("gemm_fp8.cake"))
shapes = [s for s in shapes if s["N"] % 8 == 0] + [  # noqa: F821 - set by alias_example
    {"M": 129, "N": 264, "K": 144},
    {"M": 77, "N": 328, "K": 80},
]
