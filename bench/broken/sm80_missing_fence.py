"""Inputs, reference and baselines for bench/broken/sm80_missing_fence.cake: the contract of
examples/chain_sm80.py (the same kernel with the bug)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "cake_example_chain_sm80_contract",
    Path(__file__).resolve().parents[2] / "examples" / "chain_sm80.py")
_chain = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_chain)
shapes, outputs, tolerance = _chain.shapes, _chain.outputs, _chain.tolerance
make_inputs, reference, flops, baselines = (_chain.make_inputs, _chain.reference, _chain.flops,
                                            _chain.baselines)
