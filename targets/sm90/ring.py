"""Which `lm.commit`s the sm_90a emitter holds back: one place for the fact, read by the
lowering (lowering.py, `_deferrable_commits`, which declares the held-stage register) and by
the safety gate's protocol model (passes/protocol/model.py), which must know which commits
retire the role's wgmma groups (`wgmma.wait_group 0`) and which keep the newest in flight.

Only IR is read here (no emitter state), so that the verifier imports it without the sm_90a
lowerings (targets/sm90/__init__.py loads those when a kernel is emitted)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ArriveOp, BarrierOp, CommitOp, CopyLoadOp, ForOp, IfOp, KernelOp, MmaOp, StageOp,
    StageStoreOp, TmaLoadOp, TmaStoreOp, WaitOp, stage_source,
)
from cakec.passes.derive_common import block_ops, walk
from cakec.targets.emit.emitter import role_of

#: Smallest ring whose commits keep a wgmma group in flight. The held stage is one the
#: producer cannot refill yet: with 3 stages only one is left to prefetch into, and the
#: H200 GEMM lost 3% (642 vs 662 TFLOP/s at 8192³); with 4 the two schemes tie.
MIN_RING_FOR_IN_FLIGHT = 4


def held_commit(loop: ForOp) -> CommitOp | None:
    """The commit of a ring loop `wait(full, stage=s) … mma … commit(empty, stage=s)` (one
    wait, one commit last, full/empty the two directions between the same roles, at least
    MIN_RING_FOR_IN_FLIGHT elements, no nested loop, store or `if` other than a hand-off)
    that releases stage s one iteration late, keeping the newest wgmma group in flight: the
    producer refills other stages meanwhile, and a wait on the held stage itself releases it
    first, so no wait ever blocks on a release it holds. None for any other loop, whose
    commits are `wgmma.wait_group 0` + arrive. Holds only in a role that issues wgmmas."""
    body = block_ops(loop.body.block)
    if not body or not isinstance(body[-1], CommitOp):
        return None
    commits = [op for op in body if isinstance(op, CommitOp)]
    waits = [op for op in body if isinstance(op, WaitOp)]
    if (len(commits) != 1 or len(waits) != 1
            or not any(isinstance(op, MmaOp) for op in body)
            or any(isinstance(op, (ForOp, TmaStoreOp, StageStoreOp))
                   or (isinstance(op, (IfOp, ArriveOp)) and not _hand_off(op, body))
                   for op in body)):
        return None
    commit, wait = commits[0], waits[0]
    full, empty = wait.barrier.owner, commit.barrier.owner
    if not (isinstance(full, BarrierOp) and isinstance(empty, BarrierOp)):
        return None
    if not (full.count.value.data == empty.count.value.data >= MIN_RING_FOR_IN_FLIGHT
            and wait.stage is commit.stage
            and list(full.cons) == list(empty.prod) and list(full.prod) == list(empty.cons)):
        return None
    return commit


def _hand_off(op: Operation, body: list[Operation]) -> bool:
    """Whether `op` in a ring loop is a hand-off that a held commit cannot make unsound: an
    `lm.arrive` (or an else-less `if` of arrivals, a turn handed to the next consumer) on a
    barrier whose consumers write no stage the loop's MMAs read. The arrival may then pass
    while the newest wgmma group, whose commit the model places before it, is still in
    flight: its consumers only learn that this role has waited, never that a stage is free."""
    if isinstance(op, IfOp):
        inner = block_ops(op.then_region.block)
        return (op.else_region.block.ops.first is None and any(
            isinstance(o, ArriveOp) for o in inner) and all(
            o.dialect_name() == "arith" or (isinstance(o, ArriveOp) and _hand_off(o, body))
            for o in inner))
    b = op.barrier.owner  # type: ignore[union-attr]
    read = {stage_source(o.operands[i])[0].owner.view.owner  # type: ignore[union-attr]
            for o in body if isinstance(o, MmaOp) for i in (1, 2)
            if isinstance(stage_source(o.operands[i])[0].owner, StageOp)}
    kernel = _kernel_of(op)
    written = {o.view.owner for o in walk(kernel)
               if isinstance(o, (TmaLoadOp, CopyLoadOp)) and _role_in(o, b.cons)}
    written |= {stage_source(o.dest)[0].owner.view.owner  # type: ignore[union-attr]
                for o in walk(kernel) if isinstance(o, StageStoreOp) and _role_in(o, b.cons)}
    return not (read & written)


def _kernel_of(op: Operation) -> Operation:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, KernelOp):
        parent = parent.parent_op()
    assert parent is not None, "an op of a ring loop outside any kernel"
    return parent


def _role_in(op: Operation, roles: Sequence[SSAValue]) -> bool:
    r = role_of(op)
    return r is not None and any(v.owner is r for v in roles)
