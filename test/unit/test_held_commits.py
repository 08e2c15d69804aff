"""The safety model and the sm_90a emitter agree on which `lm.commit`s are held back (a ring
loop's release one iteration late, the newest wgmma group still in flight): the model's
`Kernel.held_commits` must be exactly the commits the emitter lowers held, in every role
that issues wgmmas, for every repo kernel the sm_90a lowering runs on. A
model that holds a commit the emitter retires would miss a register-A hazard's end; one that
retires a commit the emitter holds would miss a hazard (CAKE-S044)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cakec.dialects.cake import CommitOp, KernelOp
from cakec.driver import SourceFile, verify_source
from cakec.passes.protocol.model import Kernel
from cakec.targets.emit.emitter import KernelEmitter
from cakec.targets.sm90 import lowering
from kernel_files import EXAMPLES, ROOT

#: Every repo kernel (examples, lit, distilled and GPU-test kernels), each verified for sm_90a:
#: the lowering runs on those that pass the other gates.
KERNELS = [*EXAMPLES, *(p for d in ("lit", "distilled", "gpu")
                        for p in sorted((ROOT / "test" / d).rglob("*.cake")))]


def _lowered(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[CommitOp, bool], list]:
    """({commit: lowered held} over the commits of wgmma-issuing roles, the kernel ops) of
    one verify for sm_90a (its last gate lowers every kernel that passed the others,
    verify-lowering)."""
    seen: dict[CommitOp, bool] = {}
    plain = lowering.commit_sm90

    def recording(em: KernelEmitter, op: CommitOp) -> None:
        if em.role is not None and em.role.accs:
            seen[op] = op in em.role.held
        plain(em, op)

    monkeypatch.setattr(lowering, "commit_sm90", recording)
    comp = verify_source(SourceFile(str(path), path.read_text(encoding="utf-8")), "sm_90a")
    # every kernel the emitter ran on, though a later op of it may be refused
    kernels = [k for k in comp.module.ops if isinstance(k, KernelOp)] if seen else []
    return seen, kernels


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_model_holds_what_the_emitter_holds(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen, kernels = _lowered(path, monkeypatch)
    held = set().union(*(Kernel(k).held_commits for k in kernels))
    assert {op: op in held for op in seen} == seen


def test_both_kinds_of_commit_are_met(monkeypatch: pytest.MonkeyPatch) -> None:
    """The agreement above covers held and retiring commits alike: the GEMM's ring commit is
    held (a 4-stage ring), the 3-stage ring's of hopper_gemm is not (MIN_RING_FOR_IN_FLIGHT),
    though its loop has the same shape (a shape-only predicate would call it held)."""
    gemm, _ = _lowered(ROOT / "examples" / "gemm_bf16.cake", monkeypatch)
    ring3, _ = _lowered(ROOT / "examples" / "corpus" / "hopper_gemm.cake", monkeypatch)
    assert True in gemm.values() and ring3 and True not in ring3.values()
