"""Verify implies emit: every example, corpus kernel, lit input and GPU-test kernel that verifies
for a target emits CUDA for that target, with no CAKE-H100 (bench/emit_all.py's walk, one case per
(file, target)). What cannot be lowered must be refused at verify time by the conformance
gate, never by `cakec emit`.

The verify-lowering gate refuses at verify time what the emitter does not lower, so the only
known gap left is a limit of `cakec emit` itself: a file of two kernels (each verifies and
lowers; emission takes one kernel per file). Each is a strict xfail naming the
construct: when one gets fixed this test fails until its entry is removed. MMA forms have
no entry: every form the SKU table lists lowers. A sample of the new MMA forms is also built
to a cubin with NVRTC (every example is, per declared target, in test_targets_assemble.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from emit_all import emit_for, kernels  # noqa: E402

from cakec.targets.sku import SKUS  # noqa: E402

_BLACKWELL = ("sm_100a", "sm_103a")

#: (file relative to the repository, target) -> the construct that does not lower yet.
KNOWN_GAPS: dict[tuple[str, str], str] = {
    **{(f"test/lit/frontend/{f}.cake", t): "two kernels in one file" for t in _BLACKWELL
       for f in ("two_kernels_ok", "two_kernels_targets", "two_kernels_targets_ok")},
}

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
            gap = KNOWN_GAPS.get((rel, target))
            marks = [pytest.mark.xfail(reason=gap, strict=True)] if gap else []
            cases.append(pytest.param(path, target, marks=marks, id=f"{rel}-{target}"))
    return cases


def test_every_known_gap_names_a_walked_file():
    walked = {p.relative_to(ROOT).as_posix() for p in kernels()}
    assert {f for f, _ in KNOWN_GAPS} <= walked


@pytest.mark.parametrize("path,target", _cases())
def test_verified_kernel_emits(path: Path, target: str) -> None:
    verified, unit, errors = emit_for(path, target)
    if not verified:
        return  # refused at verify time: nothing to emit
    assert unit is not None and not errors, "; ".join(errors)
    if (path.relative_to(ROOT).as_posix(), target) in CUBIN_SAMPLE:
        from cakec.api import binary

        assert binary(unit, "cubin")[:4] == b"\x7fELF"
