"""`verify-safety`: the program-safety gate (codes CAKE-S001..S049, docs/diagnostics/safety.md).

Declarations first (views inside their pool and apart, TMEM regions apart, static TMA
coordinates), then the barrier protocol of passes/protocol/: which roles may complete and
wait on each barrier, how many events complete one phase, and finally every role run against
the mbarrier machine for every trip-count class (deadlocks, races, phase lapping,
uninitialised reads). Protocol errors found structurally stop the simulation, so one mistake
is reported once rather than again as the deadlock or race it causes; a failure the simulation
finds is reported at the first wrong event behind it (protocol/departure.py), the failure as its
note.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from cakec.diagnostics import Note
from cakec.dialects import cake
from cakec.passes.base import sink_of, span_of, target_of
from cakec.passes.derive_common import exclusive, line_of, same_value, walk
from cakec.passes.protocol.cluster import cluster_findings
from cakec.passes.protocol.definite import tile_definedness
from cakec.passes.protocol.accounting import (
    accounting_of, first_wait_free, role_findings,
)
from cakec.passes.protocol.model import Finding, Kernel, View
from cakec.passes.protocol.simulate import simulate_all
from cakec.passes.protocol.trace import explore, model_of, release_model
from cakec.targets.sku import get_sku


@dataclass(frozen=True)
class VerifySafety(ModulePass):
    name = "verify-safety"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = sink_of(ctx)
        for kernel in op.ops:
            if not isinstance(kernel, cake.KernelOp):
                continue
            found = check_kernel(kernel, target_of(kernel, ctx, self.target), ctx)
            release_model(ctx, kernel)
            for f in found:
                report = sink.warning if f.warning else sink.error
                report(f.code, f.message, span_of(f.op, ctx),
                       notes=[Note(span_of(o, ctx) if o is not None else None, m)
                              for o, m in f.notes], help=f.help)


def check_kernel(kernel: cake.KernelOp, target: str, ctx: object = None) -> list[Finding]:
    """Every safety finding of one kernel; `ctx` shares the protocol model with
    derive-barriers (a fresh model is built without it)."""
    k, ex = model_of(ctx, kernel) if ctx is not None else (Kernel.build(kernel), None)
    out = _declarations(k)
    cluster = cluster_findings(kernel)
    if cluster:
        return out + cluster  # the symmetric model the simulation assumes does not hold
    if k.too_large:
        return out + [_unmodelled(k)]
    if any(f.code in ("CAKE-S016", "CAKE-S062") for f in out):
        return out  # overlapping views alias bytes: their races would repeat the overlap
    protocol = role_findings(k)
    if protocol:
        return out + protocol
    ex = ex or explore(k)
    if k.overwaited and not any(run.oob for run in ex.runs):
        # Out-of-range indices are still found (tracing is bounded by the event budgets);
        # the vector clocks of the simulation would grow with the barrier's count.
        return out + [_unmodelled(k)]
    if not any(run.oob for run in ex.runs):
        protocol = accounting_of(k, ex, target).findings
    if not protocol:
        sku = get_sku(target)
        protocol = simulate_all(k, first_wait_free(k), ex, sku.has("tcgen05"), sku.has("wgmma"))
        if ex.partial:
            protocol.append(_partial(k, ex.partial))
    return out + protocol


def _unmodelled(k: Kernel) -> Finding:
    return _partial(k, k.unmodelled,
                    help="fewer mbarriers (a smaller `count=`) let the model enumerate them")


def _partial(k: Kernel, why: str,
             help: str = "smaller static trip counts (or fewer nested loops) let every "
                         "trip-count class be simulated") -> Finding:
    return Finding(
        "CAKE-S020", k.op,
        f"the barrier protocol of `{k.op.sym_name.data}` was checked only in part: {why}",
        warning=True, help=help)


# ---- declarations ------------------------------------------------------------------------------


def _declarations(k: Kernel) -> list[Finding]:
    return (_roles(k) + _views(k) + _tmem(k) + _coords(k) + _split_tensors(k)
            + _foreign_tiles(k.op) + tile_definedness(k.op))


def _foreign_tiles(kernel: cake.KernelOp) -> list[Finding]:
    """An `lm.regs` tile lives in its role's registers: another role cannot read it (its
    threads hold other values there). Writes by another role are the frontend's CAKE-S017;
    reads of an MMA accumulator are the protocol's (role_findings, at the traced read)."""
    out: list[Finding] = []
    seen: set[tuple[cake.RegsOp, Operation]] = set()
    for on in kernel.body.block.ops:
        if not isinstance(on, cake.OnRoleOp):
            continue
        role = on.role.owner
        for op in walk(on):
            for v in op.operands:
                regs = v.owner
                if (not isinstance(regs, cake.RegsOp) or regs.role.owner is role
                        or (regs, role) in seen or _mma_written(regs)):
                    continue
                seen.add((regs, role))
                owner, name = regs.role.owner.sym_name.data, regs.sym_name.data
                out.append(Finding(
                    "CAKE-S017", op,
                    f"role {role.sym_name.data} reads register tile `{name}`, which lives in "
                    f"the registers of role {owner}",
                    [(regs, f"`{name}` is declared here for role {owner}")],
                    help=f"do this inside `with {owner}:`, or hand the data over through SMEM "
                         "or TMEM"))
    return out


def _mma_written(regs: cake.RegsOp) -> bool:
    return any(isinstance(u.operation, cake.MmaOp) and u.index == 0 for u in regs.result.uses)


def _roles(k: Kernel) -> list[Finding]:
    """A warp runs one role (docs/language.md): the dispatch gives each warp the first role
    that lists it, so a second role's blocks would never run there and its barriers would
    wait forever."""
    out: list[Finding] = []
    owner: dict[int, cake.RoleOp] = {}
    for role in (op for op in k.op.body.block.ops if isinstance(op, cake.RoleOp)):
        shared = [w for w in role.warps.get_values() if w in owner]
        if shared:
            first = owner[shared[0]]
            out.append(Finding(
                "CAKE-S022", role,
                f"warp {shared[0]} of role `{role.sym_name.data}` already belongs to role "
                f"`{first.sym_name.data}`; a warp runs exactly one role",
                [(first, f"`{first.sym_name.data}` is declared here")],
                help=f"give `{role.sym_name.data}` warps that no other role has"))
        for w in role.warps.get_values():
            owner.setdefault(w, role)
    return out


def _views(k: Kernel) -> list[Finding]:
    """Views of one pool must not overlap, except an exact alias (same offset, stage size and
    stage count) or a view declared with `reuses=` inside the bytes of another: both name
    buffers the protocol checks as one (a reuse's accesses as CAKE-S061)."""
    out: list[Finding] = []
    placed: list[View] = []
    for v in k.views:
        end = v.offset + v.stages * v.stage_bytes
        misplaced = _misplaced_reuse(v)
        if misplaced is not None:
            out.append(misplaced)
            placed.append(v)
            continue
        for other in placed:
            lo, hi = other.offset, other.offset + other.stages * other.stage_bytes
            if other.pool is not v.pool or not (v.offset < hi and lo < end) \
                    or _alias(v, other) or _one_buffer(v, other):
                continue
            out.append(Finding(
                "CAKE-S016", v.op,
                f"view `{v.name}` (bytes [{v.offset}, {end})) overlaps view `{other.name}` "
                f"(bytes [{lo}, {hi})) in pool `{v.pool.sym_name.data}`; both are live for the "
                "whole kernel",
                [(other.op, f"`{other.name}` is declared here")],
                help=f"place `{v.name}` at offset={hi} or later, or declare it with "
                     f"`reuses={other.name}` where `{other.name}` is dead before `{v.name}` "
                     "is first used"))
            break
        placed.append(v)
    return out


def _misplaced_reuse(v: View) -> Finding | None:
    """CAKE-S062: a `reuses=` view must lie in its pool's bytes of the view it reuses, each
    stage inside one stage of it and no two in the same one, so that the protocol can check
    each stage's accesses against exactly the accesses of the stage it shares bytes with."""
    old = v.reuses
    if old is None:
        return None
    why = ""
    if old.pool is not v.pool:
        why = f"`{old.name}` is a view of pool `{old.pool.sym_name.data}`"
    else:
        hosts: dict[int, int] = {}
        for s in range(v.stages):
            start = v.offset + s * v.stage_bytes
            j = v.host_stage(s)
            if not (0 <= j < old.stages
                    and start + v.stage_bytes <= old.offset + (j + 1) * old.stage_bytes):
                why = (f"bytes [{start}, {start + v.stage_bytes})"
                       + (f" of stage {s}" if v.stages > 1 else "")
                       + f" are not inside one stage of `{old.name}`")
                break
            if j in hosts:
                why = f"stages {hosts[j]} and {s} both lie in stage {j} of `{old.name}`"
                break
            hosts[j] = s
    if not why:
        return None
    lo, hi = old.offset, old.offset + old.stages * old.stage_bytes
    return Finding(
        "CAKE-S062", v.op,
        f"view `{v.name}` reuses the bytes of `{old.name}` (bytes [{lo}, {hi}) in pool "
        f"`{old.pool.sym_name.data}`, {old.stages} stage(s) of {old.stage_bytes} B), but {why}",
        [(old.op, f"`{old.name}` is declared here")],
        help=f"place each stage of `{v.name}` inside its own stage of `{old.name}` (offset="
             f"{lo} fits a stage of at most {old.stage_bytes} B), or drop `reuses=`")


def _one_buffer(a: View, b: View) -> bool:
    """Whether views related by `reuses=` share bytes only where the protocol model keys them
    as one buffer (every pair of intersecting stages)."""
    if a.reuses is None and b.reuses is None:
        return False
    for s in range(a.stages):
        lo = a.offset + s * a.stage_bytes
        for t in range(b.stages):
            start = b.offset + t * b.stage_bytes
            if lo < start + b.stage_bytes and start < lo + a.stage_bytes \
                    and a.buffer(s) != b.buffer(t):
                return False
    return True


def _alias(a: View, b: View) -> bool:
    return (a.offset, a.stage_bytes, a.stages) == (b.offset, b.stage_bytes, b.stages)


def _tmem(k: Kernel) -> list[Finding]:
    out: list[Finding] = []
    placed: list[tuple[int, int, cake.TmemOp]] = []
    for t in k.tmems:
        lo, width = t.cols.value.data, t.width.value.data
        hi = lo + width
        for plo, phi, other in placed:
            if lo < phi and plo < hi:
                out.append(Finding(
                    "CAKE-S015", t,
                    f"TMEM region `{t.sym_name.data}` (columns [{lo}, {hi})) overlaps "
                    f"`{other.sym_name.data}` (columns [{plo}, {phi})); both are live for the "
                    "whole kernel",
                    [(other, f"`{other.sym_name.data}` is declared here")],
                    help=f"move `{t.sym_name.data}` to cols={phi} or later"))
                break
        placed.append((lo, hi, t))
    return out


def _coords(k: Kernel) -> list[Finding]:
    out: list[Finding] = []
    for o in walk(k.op):
        if not isinstance(o, cake.ASYNC_LOADS):
            continue
        for c in o.coords:
            info = k.exprs(c)
            if info.key[0] == "c" and info.key[1] < 0:
                out.append(_negative(o, info.key[1]))
                break
    return out


def _split_tensors(k: Kernel) -> list[Finding]:
    """A split_store's workspace and counters belong to it: any other access races with the
    partials other CTAs are writing, or breaks the counters' invariant (0 at every launch,
    docs/language.md "Split-K"); and one pair serves one output tensor."""
    owner: dict[SSAValue, tuple[cake.SplitStoreOp, str]] = {}
    out: list[Finding] = []
    splits = [o for o in walk(k.op) if isinstance(o, cake.SplitStoreOp)]
    if not splits:
        return out  # no workspace or counters to guard (most kernels): no second walk
    for o in splits:
        for t, what in ((o.workspace, "workspace"), (o.counters, "counters")):
            first = owner.setdefault(t, (o, what))
            if first[1] != what or first[0].tensor is not o.tensor:
                out.append(_split_clash(o, t, f"is also the {first[1]} of the split_store of "
                                        f"`{first[0].tensor.name_hint}`", first[0]))
                break  # one finding per split_store
        else:
            out.extend(_twice(o, splits))
    for o in walk(k.op):
        if isinstance(o, cake.SplitStoreOp):
            continue
        for t in o.operands:
            if t in owner and isinstance(t.type, cake.TensorType):
                first, what = owner[t]
                out.append(_split_clash(o, t, f"is read or written here, but it is the {what} "
                                        f"of a split_store", first))
                break
    return out


def _twice(o: cake.SplitStoreOp, splits: list[cake.SplitStoreOp]) -> list[Finding]:
    """A second split_store of the same tile and part on one path (not the other branch of an
    `if`): the CTA arrives twice on the tile's counter, so the sum completes one arrival early,
    before another part is written, and the last part's arrival leaves the counter at 1."""
    for first in splits:
        if first is o:
            return []
        if (first.tensor is o.tensor and first.counters is o.counters
                and same_value(first.part, o.part) and len(first.coords) == len(o.coords)
                and all(same_value(a, b) for a, b in zip(first.coords, o.coords))
                and not exclusive(first, o)):
            return [Finding(
                "CAKE-S024", o,
                f"this split_store stores the same tile and part of `{o.tensor.name_hint}` as "
                f"the one at line {line_of(first)}, on the same path: the CTA arrives twice on "
                "the tile's counter, so the sum completes before every part is written and "
                "the counter is not 0 at the next launch",
                [(first, "the first split_store of that tile and part is here")],
                help="store each (tile, part) once: one split_store per tile, or the other on "
                     "the other branch of an `if`")]
    return []


def _split_clash(o: Operation, t: SSAValue, why: str, first: cake.SplitStoreOp) -> Finding:
    return Finding(
        "CAKE-S024", o, f"tensor `{t.name_hint}` {why}: other CTAs' partial sums and "
        "arrivals would race with this access",
        [(first, "the split_store is here")],
        help="give each split_store output its own workspace and counters, and touch them "
             "nowhere else")


def _negative(o: Operation, value: int) -> Finding:
    tensor = o.tensor.name_hint or "the tensor"
    return Finding(
        "CAKE-S011", o,
        f"tile coordinate {value} is outside tensor `{tensor}`: tile coordinates start at 0",
        help="use a coordinate in [0, cdiv(extent, box)) along every dimension")
