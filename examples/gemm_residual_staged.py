"""Inputs, reference and baselines for examples/gemm_residual_staged.cake (`cakec run` reads
these): examples/gemm_residual.py's, since the staged schedule takes the same parameters,
computes the same result and needs the same alignment (R's and C's rows 16-byte aligned)."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("gemm_residual.cake"))
