"""Inputs, reference and baselines for examples/gemm_residual_cooperative.cake (`cakec run` reads
these): examples/gemm_residual.py's, since the cooperative schedule takes the same parameters and
computes the same result; its shapes are every epilogue shape, odd N included (it reads R from
global memory, so R's rows may have any pitch)."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

_base = alias_example(globals(), Path(__file__).resolve().with_name("gemm_residual.cake"))
shapes = _base.ALL_SHAPES + [s for s in _base.shapes if s not in _base.ALL_SHAPES]
