"""The cluster side of the barrier protocol (CAKE-S045..S047).

The model simulates one block; the blocks of a multicast group run the same program, so
what one block's barriers see, every member's see. That symmetry is what makes a multicast
schedule safe, and these checks hold the author to it:

* S045: a `tma_load(..., multicast=A)` writes view[s] of every block of its group, so the
  wait that guards it (the producer's `lm.wait(empty, stage=s)` before the copy) must mean
  "every consumer of every member released s": each release of that barrier is
  `lm.arrive(empty, stage=s, multicast=A')` or `lm.commit(empty, stage=s, multicast=A')` with
  A' ⊇ A, which arrives on every member's
  barrier (the compiler counts those arrivals: consumers × group size).
* S046: a block that exits while a peer still copies into its SMEM or arrives on its
  barriers corrupts whatever runs next on that SM: a kernel with multicast copies or
  arrivals ends with `lm.cluster_sync()`.
* S047: a multicast copy or arrival under a branch or loop bound that depends on
  `lm.cluster_rank()`: members would issue different sequences, and the symmetric model no
  longer describes them.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from cakec.dialects import cake
from cakec.passes.derive_common import line_of, role_of, same_value, walk
from cakec.passes.protocol.model import Finding
from cakec.targets.cluster import AXES, multicast_axes



def cluster_findings(kernel: cake.KernelOp) -> list[Finding]:
    ops = walk(kernel)
    multicast = [op for op in ops
                 if isinstance(op, (cake.TmaLoadOp, cake.ArriveOp, cake.CommitOp))
                 and multicast_axes(op)]
    if not multicast:
        return []
    out: list[Finding] = []
    for i, op in enumerate(ops):
        if isinstance(op, cake.TmaLoadOp) and multicast_axes(op):
            out += _released_by_every_member(op, ops[:i], ops)
    out += _asymmetric(multicast)
    if not any(isinstance(op, cake.ClusterSyncOp) for op in ops):
        first = multicast[0]
        what = ("copies into the SMEM of" if isinstance(first, cake.TmaLoadOp)
                else "arrives on the barriers of")
        out.append(Finding(
            "CAKE-S046", first,
            f"this {what} other blocks of the cluster, but the kernel does not end with "
            "`lm.cluster_sync()`: a block may exit while a peer still writes into its shared "
            "memory or arrives on its barriers",
            help="add `lm.cluster_sync()` as the kernel's last statement, after its role "
                 "blocks"))
    return out


def _axes_text(axes: tuple[int, ...]) -> str:
    return ", ".join(AXES[a] for a in axes)


def _released_by_every_member(load: cake.TmaLoadOp, before: list[Operation],
                              ops: list[Operation]) -> list[Finding]:
    role = role_of(load)
    axes = multicast_axes(load)
    view = load.view.owner
    name = view.sym_name.data if isinstance(view, cake.ViewOp) else "the view"
    guard = next((w for w in reversed(before) if isinstance(w, cake.WaitOp)
                  and role_of(w) is role and w.barrier is not load.barrier
                  and same_value(w.stage, load.stage)), None)
    if guard is None:
        return [Finding(
            "CAKE-S045", load,
            f"this copy writes `{name}` in every block of the cluster along "
            f"{_axes_text(axes)}, but no `lm.wait` on the stage's release comes before it: "
            "it may overwrite a stage a peer still reads",
            help="wait first on the barrier the consumers release the stage through, e.g. "
                 "`lm.wait(empty, stage=s)`, and release it with `lm.arrive(empty, stage=s, "
                 f"multicast={_py_axes(axes)})`")]
    barrier = guard.barrier
    out = []
    for rel in ops:
        if not isinstance(rel, (cake.ArriveOp, cake.CommitOp)) or rel.barrier is not barrier:
            continue
        if set(axes) <= set(multicast_axes(rel)):
            continue
        bname = barrier.owner.sym_name.data  # type: ignore[union-attr]
        verb = "commit" if isinstance(rel, cake.CommitOp) else "arrive"
        fix = (f"release it to every member: `lm.{verb}({bname}, stage=..., "
               f"multicast={_py_axes(axes)})`")
        out.append(Finding(
            "CAKE-S045", rel,
            f"this releases a stage of `{bname}` in this block only, but `{name}` is filled by "
            f"a copy multicast to every block along {_axes_text(axes)} (line "
            f"{line_of(load)}) once `{bname}` says the stage is free: a peer may overwrite the "
            "stage while this block still reads it",
            [(load, "the multicast copy"), (guard, "the wait it follows")], help=fix))
    return out


def _py_axes(axes: tuple[int, ...]) -> str:
    return str(axes[0]) if len(axes) == 1 else str(axes)


def _asymmetric(multicast: list[Operation]) -> list[Finding]:
    out = []
    for op in multicast:
        parent = op.parent_op()
        while parent is not None and not isinstance(parent, cake.KernelOp):
            ctl = (parent.cond if isinstance(parent, cake.IfOp) else
                   parent.operands[:3] if isinstance(parent, cake.ForOp) else ())
            values = [ctl] if isinstance(ctl, SSAValue) else list(ctl)
            if any(_rank_dependent(v) for v in values):
                out.append(Finding(
                    "CAKE-S047", op,
                    "this multicast copy or arrival runs under a branch or loop that depends on "
                    "`lm.cluster_rank()`: the blocks of its group would not issue the same "
                    "sequence, and their barriers would disagree",
                    [(parent, "the rank-dependent branch or loop")],
                    help="keep multicast copies and arrivals on paths every member of the "
                         "group takes alike; use the rank in coordinates, not in control flow"))
                break
            parent = parent.parent_op()
    return out


def _rank_dependent(v: SSAValue) -> bool:
    owner = v.owner
    if isinstance(owner, cake.ClusterRankOp):
        return True
    if not isinstance(owner, Operation) or owner.regions:
        return False
    return any(_rank_dependent(o) for o in owner.operands)
