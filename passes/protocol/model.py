"""Declarations of the barrier protocol model and the kernel model built from them.

A kernel is a set of roles; each role is a sequential program (the ops of its `cake.on_role`
blocks, in order; kernel-level arith is shared). Cross-role order comes only from mbarriers.

`Kernel.build(kernel_op)` reads the declarations (roles, barriers, views, TMEM regions,
register tiles, the grid) and compiles each role into a small instruction tree (`Instr`)
whose scalar operands are closures over an environment (loop variables and the values of a
launch, see exprs.py and launch.py). Problems are `Finding`s in the author's terms; the
event kinds of a role trace are defined here too.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Operation, SSAValue

from cakec.dialects import cake
from cakec.dialects.cake import tile_leaves
from cakec.passes.derive_common import overwaited, walk as walk_ops
from cakec.passes.protocol.exprs import ExprInfo, Exprs
from cakec.targets.sku import MAX_WAITED_MBARRIERS
from cakec.targets.sm90.ring import held_commit

MAX_ELEMENTS = 4096  # mbarriers the model enumerates (32 KiB of them; no SMEM holds more)

# Event kinds of a role trace. READ_STAGE is a synchronous read of an SMEM stage by the role's
# threads (`lm.sum_sq`, `view[s].load()`, and a TMA store of a stage, which the role waits
# for): complete at its place in the program, unlike an MMA's operand reads. WRITE_STAGE is the
# role's threads writing a register tile into a stage (`view[s].store`): complete at its place
# in the program (the threads' own stores), known to another role once an arrival after it
# reaches that role. TILE_WRITE merges into the running tiles of an `lm.argmin` (its `value`
# and `index`; afresh when `init`), TILE_READ reads running tiles (a store, an assignment, a
# reduction): both synchronous, in the registers of the role.
# SKIP is an `lm.skip`: the role passes over one phase of a barrier element (one ring position
# another consumer takes) without waiting; it counts among the role's consumptions of the
# element, as a wait does, but orders nothing. ACC_WRITE is an assignment to a register tile
# that a register-A MMA packs (`p = lm.exp2(s - m)` for `lm.mma(o, p.to(lm.bf16), ...)`) and
# no MMA writes (an MMA accumulator's assignment is a READ_ACC with `dest`): synchronous; it
# dates the tile's value, which a wgmma still in flight may read from the packed fragments.
(WAIT, ARRIVE, COMMIT, TMA, MMA, READ_ACC, READ_STAGE, WRITE_STAGE, TILE_WRITE, TILE_READ,
 SKIP, ACC_WRITE) = range(12)


def line_of(op: Operation) -> int:
    loc = op.location
    return loc.line.data if isinstance(loc, FileLineColLoc) else 0


def name_of(op: Operation) -> str:
    attr = op.properties.get("sym_name")
    return attr.data if attr is not None else "?"


# ---- declarations ------------------------------------------------------------------------------


@dataclass(eq=False)
class Role:
    op: cake.RoleOp
    name: str
    index: int
    warps: tuple[int, ...]
    single_thread: bool = False  # runs on one elected thread (cake.runs_single_thread)

    @property
    def warpgroups(self) -> int:
        return len({w // 4 for w in self.warps})


@dataclass(eq=False)
class Barrier:
    op: cake.BarrierOp
    name: str
    count: int
    init_count: int
    prod: frozenset[int]  # role indices
    cons: frozenset[int]
    base: int  # index of element 0 among all barrier elements of the kernel

    def elem(self, i: int) -> str:
        return f"{self.name}[{i}]"


@dataclass(eq=False)
class View:
    op: cake.ViewOp
    name: str
    stages: int
    stage_bytes: int
    offset: int
    pool: cake.SmemOp
    #: the view whose bytes this one reuses (`reuses=`); the gate's `_views` checks that each
    #: stage lies inside one stage of it, each in another
    reuses: "View | None" = None

    def __post_init__(self) -> None:
        #: `buffer(s)` of the first stages, built once (the simulation asks at every access)
        self.buffers = [self._buffer(s) for s in range(min(self.stages, 64))]

    def buffer(self, s: int) -> tuple[int, int, int]:
        """The bytes of stage s; views that alias a buffer share its key, and a view that
        reuses another's bytes has the key of the stage it lies in: the simulation orders
        the accesses of both as one buffer's (simulate.py reports those as CAKE-S061)."""
        return self.buffers[s] if 0 <= s < len(self.buffers) else self._buffer(s)

    def host_stage(self, s: int) -> int:
        """The stage of the reused view that stage s starts in."""
        assert self.reuses is not None
        return (self.offset + s * self.stage_bytes - self.reuses.offset) \
            // self.reuses.stage_bytes

    def _buffer(self, s: int) -> tuple[int, int, int]:
        if self.reuses is not None:
            return self.reuses.buffer(self.host_stage(s))
        return id(self.pool), self.offset + s * self.stage_bytes, self.stage_bytes


@dataclass(eq=False)
class Acc:
    """An MMA accumulator: a TMEM region or a register tile owned by one role."""

    op: cake.TmemOp | cake.RegsOp
    name: str
    index: int
    owner: int | None  # role index for register tiles


# ---- role programs -----------------------------------------------------------------------------


class Instr:
    """One effect in a role program. `kind` is an event kind or "loop" / "branch"."""

    __slots__ = ("op", "kind", "barrier", "stage", "view", "bytes", "acc", "a", "b", "init",
                 "lb", "ub", "step", "iv", "body", "cond", "orelse", "runtime", "tiles", "dest",
                 "count")

    def __init__(self, op: Operation, kind: int | str, **kw: object):
        self.op = op
        self.kind = kind
        for k in self.__slots__[2:]:
            setattr(self, k, kw.get(k))


@dataclass
class Finding:
    """One problem in the author's terms; the gate turns it into a diagnostic."""

    code: str
    op: Operation
    message: str
    notes: list[tuple[Operation | None, str]] = field(default_factory=list)
    help: str | None = None
    warning: bool = False


# ---- the kernel model --------------------------------------------------------------------------


class Kernel:
    """Declarations, compiled role programs and trip-count symbols of one `cake.kernel`."""

    def __init__(self, op: cake.KernelOp):
        self.op = op
        self.exprs = Exprs()
        self.roles: list[Role] = []
        self.barriers: list[Barrier] = []
        self.views: list[View] = []
        self.reuses: list[View] = []  # the views declared with `reuses=`
        self.accs: list[Acc] = []
        self.pools: list[cake.SmemOp] = []
        self.tmems: list[cake.TmemOp] = []
        self.running: set[Acc] = set()  # the `value` and `index` tiles of `lm.argmin`s
        self.register_a: set[Acc] = set()  # register tiles a register-A MMA packs
        #: commits the sm_90a emitter may hold back (targets/sm90/ring.py), keeping the newest
        #: wgmma group in flight; any other is `wgmma.wait_group 0` + arrive, after which no
        #: wgmma of the role reads its registers
        self.held_commits: set[Operation] = set()
        self.elem_barrier: list[tuple[Barrier, int]] = []
        self.total_elems = 0  # mbarriers of all barrier arrays
        self.programs: list[list[Instr]] = []
        self.traced: list | None = None  # the programs compiled for tracing (trace.py)
        self.undecidable: list[Instr] = []  # instructions whose operands never evaluate
        #: facts derived from the programs alone, computed once by whichever pass asks first
        self.memo: dict[str, object] = {}
        self._role_of: dict[Operation, Role] = {}
        self._barrier_of: dict[Operation, Barrier] = {}
        self._view_of: dict[Operation, View] = {}
        self._acc_of: dict[Operation, Acc] = {}
        self._stage_loads: dict[Instr, tuple[cake.StageLoadOp, ...]] = {}
        self.overwaited = overwaited(walk_ops(op))
        self._read_declarations()
        self.programs = [self._compile(list(op.body.block.ops), r, inside=False)
                         for r in self.roles]
        self.depths = sorted({b.count for b in self.barriers} | {v.stages for v in self.views}
                             | {1})
        self.period = 2 * _lcm(self.depths)
        self.grid = next((o for o in op.body.block.ops if isinstance(o, cake.GridOp)), None)

    @classmethod
    def build(cls, op: cake.KernelOp) -> "Kernel":
        return cls(op)

    @property
    def n_elems(self) -> int:
        return len(self.elem_barrier)

    @property
    def too_large(self) -> bool:
        """More mbarriers than any shared memory holds: the model does not enumerate them
        (the conformance gate reports the shared memory)."""
        return self.total_elems > MAX_ELEMENTS

    @property
    def unmodelled(self) -> str:
        """Why the model does not simulate this kernel ("" when it does): more mbarriers than
        it enumerates, or a waited barrier of more mbarriers than the lowering can wait on
        (the vector clocks grow with the count; CAKE-H018 rejects it)."""
        if self.too_large:
            return (f"it declares {self.total_elems} mbarriers, more than the {MAX_ELEMENTS} "
                    "the model enumerates")
        if self.overwaited:
            b = self._barrier_of[next(iter(self.overwaited))]
            return (f"barrier `{b.name}` has {b.count} mbarriers and is waited on, more than "
                    f"the {MAX_WAITED_MBARRIERS} a waited barrier may have")
        return ""

    # ---- declarations --------------------------------------------------------------------------

    def _read_declarations(self) -> None:
        ops = list(self.op.body.block.ops)
        for o in ops:
            if isinstance(o, cake.RoleOp):
                ons = [on for on in ops if isinstance(on, cake.OnRoleOp) and on.role.owner is o]
                r = Role(o, name_of(o), len(self.roles), tuple(o.warps.get_values()),
                         cake.runs_single_thread(ons))
                self.roles.append(r)
                self._role_of[o] = r
        for o in ops:
            if isinstance(o, cake.BarrierOp):
                b = Barrier(o, name_of(o), o.count.value.data, o.init_count.value.data,
                            frozenset(self._role_of[p.owner].index for p in o.prod),
                            frozenset(self._role_of[c.owner].index for c in o.cons),
                            self.total_elems)
                self.barriers.append(b)
                self._barrier_of[o] = b
                self.total_elems += b.count
                if not self.too_large:
                    self.elem_barrier.extend((b, i) for i in range(b.count))
            elif isinstance(o, cake.SmemOp):
                self.pools.append(o)
            elif isinstance(o, cake.ViewOp):
                t = o.result.type
                assert isinstance(t, cake.ViewType)
                nbytes = o.attributes.get("cake.stage_bytes")
                v = View(o, name_of(o), t.stages.data,
                         nbytes.value.data if nbytes is not None else t.num_bytes(),
                         o.offset.value.data, o.pool.owner,
                         self._view_of.get(o.reuses.owner) if o.reuses is not None else None)
                if v.reuses is not None:
                    self.reuses.append(v)
                self.views.append(v)
                self._view_of[o] = v
            elif isinstance(o, (cake.TmemOp, cake.RegsOp)):
                owner = (self._role_of[o.role.owner].index if isinstance(o, cake.RegsOp)
                         else None)
                a = Acc(o, name_of(o), len(self.accs), owner)
                self.accs.append(a)
                self._acc_of[o] = a
                if isinstance(o, cake.TmemOp):
                    self.tmems.append(o)
        for o in walk_ops(self.op):
            if isinstance(o, cake.ArgminOp):
                self.running.update(filter(None, (self.acc_of(o.value), self.acc_of(o.index))))
            elif isinstance(o, cake.MmaOp) and self._operand(o.a) is None:
                self.register_a.update(self._a_tiles(o))
            elif isinstance(o, cake.ForOp) and (commit := held_commit(o)) is not None:
                self.held_commits.add(commit)

    def barrier_of(self, v: SSAValue) -> Barrier:
        return self._barrier_of[v.owner]

    def view_of(self, v: SSAValue) -> View:
        return self._view_of[v.owner]

    def acc_of(self, v: SSAValue) -> Acc | None:
        return self._acc_of.get(v.owner)

    def stage_loads(self, ins: Instr) -> tuple[cake.StageLoadOp, ...]:
        """The `view[s].load()` vectors in the tile expression `ins` reads (its `source`)."""
        got = self._stage_loads.get(ins)
        if got is None:
            source = getattr(ins.op, "source", None)
            got = () if source is None else tuple(
                leaf.owner for leaf in tile_leaves(source)
                if isinstance(leaf.owner, cake.StageLoadOp))
            self._stage_loads[ins] = got
        return got

    # ---- compiling role programs ---------------------------------------------------------------

    def _compile(self, ops: list[Operation], role: Role, inside: bool) -> list[Instr]:
        out: list[Instr] = []
        for o in ops:
            if o.name.startswith("arith."):
                continue  # scalar arithmetic (most ops): read where an effect uses it (exprs.py)
            if isinstance(o, cake.OnRoleOp):
                if not inside and self._role_of.get(o.role.owner) is role:
                    out.extend(self._compile(list(o.body.block.ops), role, inside=True))
            elif isinstance(o, cake.ForOp):
                body = self._compile(list(o.body.block.ops), role, inside)
                if body:
                    e = self.exprs
                    out.append(Instr(o, "loop", lb=e(o.lb), ub=e(o.ub), step=e(o.step),
                                     iv=o.body.block.args[0], body=body,
                                     runtime=any(e(x).runtime for x in (o.lb, o.ub, o.step))))
            elif isinstance(o, cake.IfOp) and cake.per_warp(o):
                # `if lm.any(...)` holds register arithmetic only (the frontend's rule): traced
                # as the path that skips it, with its tile writes kept: its waits (a read of an
                # accumulator retires the MMA) order nothing on the other path, so every hazard
                # of either path is one of this trace.
                out.extend(i for i in self._compile(list(o.then_region.block.ops), role, inside)
                           if i.kind != READ_ACC)
            elif isinstance(o, cake.IfOp):
                then = self._compile(list(o.then_region.block.ops), role, inside)
                orelse = self._compile(list(o.else_region.block.ops), role, inside)
                if then or orelse:
                    c = self.exprs(o.cond)
                    out.append(Instr(o, "branch", cond=c, body=then, orelse=orelse,
                                     runtime=c.runtime))
            elif inside:
                if isinstance(o, cake.MmaOp) and isinstance(o.a.type, cake.TileType):
                    # a register A (`lm.mma(o, p.to(lm.bf16), ...)`) is evaluated, waiting for
                    # the MMAs that write the accumulators it names, before the MMA issues
                    acc = self._tile_acc(o.a)
                    if acc is not None:
                        out.append(Instr(o, READ_ACC, acc=acc))
                ins = self._effect(o)
                if ins is not None:
                    out.extend(self._other_reads(o, ins))
                    out.append(ins)
                out.extend(self._running_tiles(o))
                if isinstance(o, cake.TileAssignOp) and not _mma_acc(o.dest):
                    dest = self.acc_of(o.dest)
                    if dest in self.register_a:
                        out.append(Instr(o, ACC_WRITE, tiles=(dest,)))
        return out

    def _running_tiles(self, o: Operation) -> list[Instr]:
        """The reads and writes of `lm.argmin`'s running tiles by op `o` (after its other
        effect: an argmin reads its source, then merges)."""
        if isinstance(o, cake.ArgminOp):
            return [Instr(o, TILE_WRITE, init=self.exprs(o.init),
                          tiles=tuple(filter(None, (self.acc_of(o.value),
                                                    self.acc_of(o.index)))))]
        source = _tile_source(o)
        if source is None or not self.running:
            return []
        read = tuple(dict.fromkeys(a for a in map(self.acc_of, tile_leaves(source))
                                   if a in self.running))
        if isinstance(o, cake.TileAssignOp) and self.acc_of(o.dest) in self.running:
            # An assignment starts the tile afresh (no `init` expression: always)
            return [*([Instr(o, TILE_READ, tiles=read)] if read else []),
                    Instr(o, TILE_WRITE, tiles=(self.acc_of(o.dest),))]
        return [Instr(o, TILE_READ, tiles=read)] if read else []

    def _effect(self, o: Operation) -> Instr | None:
        e = self.exprs
        if isinstance(o, (cake.WaitOp, cake.ArriveOp, cake.CommitOp)):
            kind = {cake.WaitOp: WAIT, cake.ArriveOp: ARRIVE, cake.CommitOp: COMMIT}[type(o)]
            return Instr(o, kind, barrier=self.barrier_of(o.barrier), stage=e(o.stage))
        if isinstance(o, cake.SkipOp):
            return Instr(o, SKIP, barrier=self.barrier_of(o.barrier), stage=e(o.stage),
                         count=e(o.count))
        if isinstance(o, cake.ASYNC_LOADS):  # copy_load: a TMA load without tx bytes
            view = self.view_of(o.view)
            tx = view.stage_bytes if isinstance(o, cake.TmaLoadOp) else 0
            return Instr(o, TMA, barrier=self.barrier_of(o.barrier), stage=e(o.stage),
                         view=view, bytes=tx)
        if isinstance(o, cake.MmaOp):
            a = self._operand(o.a)
            return Instr(o, MMA, acc=self.acc_of(o.acc), a=a, b=self._operand(o.b),
                         init=e(o.init), tiles=self._a_tiles(o) if a is None else None)
        if isinstance(o, cake.ConvertOp):  # of an MMA's accumulator (other tiles: definite.py)
            acc = self.acc_of(o.source) if _mma_acc(o.source) else None
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, cake.TmaStoreOp):
            v = o.value
            if isinstance(v.owner, cake.ConvertOp) and _mma_acc(v.owner.source):
                return None  # `acc.to(...)`: the conversion reads it, where it stands
            # an expression of the accumulator (`lm.gelu(acc + bias).to(lm.bf16)`) is read here
            acc = self.acc_of(v) or self._tile_acc(v)
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, cake.TileAssignOp) and _mma_acc(o.dest):
            # A loop-carried MMA accumulator given a value (`s = S0.load(...)`, `s = s * d`):
            # it reads what its value names, then writes the accumulator, synchronously.
            return Instr(o, READ_ACC, acc=self._tile_acc(o.value), dest=self.acc_of(o.dest))
        if isinstance(o, _TILE_READERS):  # reads the accumulator its tile expression names
            source = _tile_source(o)
            acc = self._tile_acc(source)
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, cake.StageStoreOp):  # also reads the accumulator its value names
            stage = self._operand(o.dest)
            return Instr(o, WRITE_STAGE, a=stage, view=stage[0] if stage else None,
                         acc=self._tile_acc(o.value)) if stage is not None else None
        if isinstance(o, (cake.SumSqOp, cake.StageLoadOp, cake.TmaStoreStageOp)):
            stage = self._operand(o.source)
            return Instr(o, READ_STAGE, a=stage) if stage is not None else None
        return None

    def _tile_acc(self, v: SSAValue) -> Acc | None:
        """The MMA accumulator a tile expression reads (the first one), if any."""
        return next(iter(self._tile_accs(v)), None)

    def _tile_accs(self, v: SSAValue) -> tuple[Acc, ...]:
        """Every MMA accumulator a tile expression reads, in order."""
        return tuple(dict.fromkeys(filter(None, map(self.acc_of, (
            leaf for leaf in tile_leaves(v) if _mma_acc(leaf))))))

    def _other_reads(self, o: Operation, ins: Instr) -> list[Instr]:
        """A READ_ACC of each further accumulator the expression of `o` reads: _effect's
        instruction names the first, but `O.store(x + acc)` reads (and retires) both, so
        neither counts as unread (CAKE-S023) nor as still in flight (CAKE-S041) after it."""
        source = _tile_source(o)
        if ins.kind not in (READ_ACC, WRITE_STAGE) or ins.acc is None or source is None:
            return []
        return [Instr(o, READ_ACC, acc=a) for a in self._tile_accs(source) if a is not ins.acc]

    def _a_tiles(self, o: cake.MmaOp) -> tuple[Acc, ...]:
        """The register tiles a register-A MMA packs into its A fragments."""
        return tuple(dict.fromkeys(filter(None, map(self.acc_of, tile_leaves(o.a)))))

    def _operand(self, v: SSAValue) -> tuple[View, ExprInfo, Operation] | None:
        op = cake.stage_source(v)[0].owner
        if isinstance(op, cake.StageOp):
            return self.view_of(op.view), self.exprs(op.index), op
        return None


def _lcm(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out = out * x // math.gcd(out, x)
        if out > 64:  # stage counts without a small common period: fall back to the largest
            return 2 * max(xs)
    return out


def walk(prog: list[Instr]) -> Iterator[Instr]:
    for ins in prog:
        yield ins
        if ins.kind in ("loop", "branch"):
            yield from walk(ins.body)
            if ins.orelse:
                yield from walk(ins.orelse)


VERB = {ARRIVE: "`lm.arrive`", COMMIT: "`lm.commit`", TMA: "a TMA load"}


#: Ops that consume a tile expression (pure tile ops are read where these stand).
_TILE_READERS = (cake.ArgminOp, cake.TileStoreOp, cake.SplitStoreOp, cake.TileReduceOp,
                 cake.TileAssignOp)


def _tile_source(o: Operation) -> SSAValue | None:
    """The tile expression a consuming op reads (None for other ops)."""
    if isinstance(o, (cake.TileStoreOp, cake.SplitStoreOp, cake.TileAssignOp, cake.TmaStoreOp,
                      cake.StageStoreOp)):
        return o.value
    if isinstance(o, (cake.ArgminOp, cake.TileReduceOp)):
        return o.source
    return None


def _mma_acc(v: SSAValue) -> bool:
    return any(isinstance(u.operation, cake.MmaOp) and u.operation.acc is v for u in v.uses)


def writes_of(ins: Instr) -> set[object]:
    """What an instruction writes: view buffers (by TMA or `store`), accumulators (MMA)."""
    if ins.kind in (TMA, WRITE_STAGE):
        return {ins.view.buffer(0)}
    if ins.kind == MMA and ins.acc is not None:
        return {ins.acc}
    return set()


def reads_of(ins: Instr) -> set[object]:
    """What an instruction reads: operand view buffers, accumulators."""
    if ins.kind in (MMA, READ_STAGE):
        return {o[0].buffer(0) for o in (ins.a, ins.b) if o is not None}
    if ins.kind in (READ_ACC, WRITE_STAGE) and ins.acc is not None:
        return {ins.acc}
    return set()
