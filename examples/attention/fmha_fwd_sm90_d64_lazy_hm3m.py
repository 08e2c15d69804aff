"""Inputs, reference and baselines for examples/attention/fmha_fwd_sm90_d64_lazy_hm3m.cake (`cakec
run` reads these): examples/attention/fmha_fwd_sm90.py's, since this candidate
(fmha_fwd_sm90_d64_lazy_hm3.cake with the one-compare mask) takes the same parameters and
computes the same result."""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

alias_example(globals(), Path(__file__).resolve().with_name("fmha_fwd_sm90.cake"))

#: The shipped example's problem sizes at this kernel's head dim.
shapes = [s for s in shapes if s["D"] == 64]  # noqa: F821 (set by alias_example)
