"""Inputs, reference and baselines for examples/gemm_fp8_cooperative.cake (`cakec run` reads
these): examples/gemm_fp8.py's, since the cooperative schedule takes the same parameters and
computes the same result."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("gemm_fp8.cake"))
