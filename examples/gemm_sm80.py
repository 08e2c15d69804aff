"""Inputs, reference and baselines for examples/gemm_sm80.cake (`cakec run` reads these):
the same C = A · Bᵀ contract as examples/gemm_bf16.py (bf16 in, f32 accumulate, bf16 out).

`cakec run` builds a cubin for the .cake's target (sm_80): run it on an A100 (or pass
--target sm_89 / sm_120a on those GPUs); on newer GPUs use `ptx_kernel()` below.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# The GEMM contract is one: shapes, inputs, reference and baselines come from gemm_bf16.py.
_spec = importlib.util.spec_from_file_location("cake_example_gemm_bf16_contract",
                                               Path(__file__).resolve().with_name("gemm_bf16.py"))
_gemm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_gemm)
shapes, outputs, tolerance = _gemm.shapes, _gemm.outputs, _gemm.tolerance
make_inputs, reference, flops, baselines = (_gemm.make_inputs, _gemm.reference, _gemm.flops,
                                            _gemm.baselines)


def ptx_kernel(source: str | None = None):
    """The kernel emitted as sm_80 PTX, which the driver JIT-compiles for the current GPU (any
    GPU from sm_80 on runs sm_80 PTX)."""
    from pathlib import Path

    from cakec import api
    from cakec.runtime import Kernel

    path = source or str(Path(__file__).with_suffix(".cake"))
    result = api.emit(api.load(path), "sm_80")
    if result.unit is None:
        raise RuntimeError(f"{path} did not emit for sm_80")
    return Kernel(api.binary(result.unit, "ptx") + b"\0", result.unit.metadata)
