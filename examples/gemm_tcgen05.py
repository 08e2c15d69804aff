"""Inputs, reference and baselines for examples/gemm_tcgen05.cake (`cakec run` reads these):
the same C = A · Bᵀ contract as examples/gemm_bf16.py (bf16 in, f32 accumulate, bf16 out).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# The GEMM contract is one: shapes, inputs, reference and baselines come from gemm_bf16.py.
_spec = importlib.util.spec_from_file_location("cake_example_gemm_bf16_contract",
                                               Path(__file__).with_name("gemm_bf16.py"))
_gemm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gemm)
shapes, outputs, tolerance = _gemm.shapes, _gemm.outputs, _gemm.tolerance
make_inputs, reference, flops, baselines = (_gemm.make_inputs, _gemm.reference, _gemm.flops,
                                            _gemm.baselines)
