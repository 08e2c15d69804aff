"""Inputs, reference and baselines for examples/gemm_bf16_pingpong.cake (`cakec run` reads
these): examples/gemm_bf16.py's, since the ping-pong schedule takes the same parameters and
computes the same result."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("gemm_bf16.cake"))
