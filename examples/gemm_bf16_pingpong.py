"""Inputs, reference and baselines for examples/gemm_bf16_pingpong.cake (`cakec run` reads
these): examples/gemm_bf16.py's, since the ping-pong schedule takes the same parameters and
computes the same result."""

from __future__ import annotations

from pathlib import Path

from cakec.api import load_example

_base = load_example(Path(__file__).resolve().with_name("gemm_bf16.cake"))

# The contract's names (docs/run.md), those the example defines: `tolerance` and `flops`
# are optional.
globals().update({name: getattr(_base, name) for name in (
    "shapes", "outputs", "make_inputs", "reference", "baselines", "tolerance", "flops")
    if hasattr(_base, name)})
