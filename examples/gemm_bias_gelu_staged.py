"""Inputs, reference and baselines for examples/gemm_bias_gelu_staged.cake (`cakec run` reads
these): examples/gemm_bias_gelu.py's, since the staged schedule takes the same parameters and
computes the same result; its shapes are those whose C rows a TMA store can address (N % 8 == 0,
16-byte rows: `cakec.kernels.gemm_bias_gelu` sends the others to gemm_bias_gelu.cake)."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("gemm_bias_gelu.cake"))
shapes = [s for s in shapes if s["N"] % 8 == 0]  # noqa: F821 - set by alias_example
