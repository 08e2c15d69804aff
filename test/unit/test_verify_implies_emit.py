"""Verify implies emit: every example, corpus kernel, lit input and GPU-test kernel that verifies
for a target emits CUDA for that target, with no CAKE-H100 (bench/emit_all.py's walk, one case per
(file, target)). What cannot be lowered must be refused at verify time by the conformance
gate, never by `cakec emit`.

The verify-lowering gate refuses at verify time what the emitter does not lower, so there is
no known gap: a file of several kernels emits each (`cakec emit --kernel NAME`). A sample of
the MMA forms is also built to a cubin with NVRTC (every example is, per declared target, in
test_targets_assemble.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from emit_all import emit_for, kernels  # noqa: E402

from cakec.targets.sku import SKUS  # noqa: E402

#: Built to a cubin with NVRTC as well: one kernel per new MMA form family.
CUBIN_SAMPLE = {("test/gpu/mma_forms/mma_wgmma_n96_bf16.cake", "sm_90a"),
                ("test/gpu/mma_forms/mma_wgmma_e4m3.cake", "sm_90a"),
                ("test/gpu/mma_forms/mma_wgmma_s8.cake", "sm_120a"),
                ("test/gpu/mma_forms/tcgen05_i8.cake", "sm_100a")}


def _cases() -> list:
    cases = []
    for path in kernels():
        rel = path.relative_to(ROOT).as_posix()
        for target in SKUS:
            cases.append(pytest.param(path, target, id=f"{rel}-{target}"))
    return cases


@pytest.mark.parametrize("path,target", _cases())
def test_verified_kernel_emits(path: Path, target: str) -> None:
    verified, units, errors = emit_for(path, target)
    if not verified:
        return  # refused at verify time: nothing to emit
    assert None not in units.values() and not errors, "; ".join(errors)
    if (path.relative_to(ROOT).as_posix(), target) in CUBIN_SAMPLE:
        from cakec.api import binary

        for unit in units.values():
            assert binary(unit, "cubin")[:4] == b"\x7fELF"
