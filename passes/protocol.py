"""The barrier protocol model shared by `derive-barriers` and `verify-safety`.

A kernel is a set of roles; each role is a sequential program (the ops of its `cake.on_role`
blocks, in order; kernel-level arith is shared). Cross-role order comes only from mbarriers.

* `Kernel.build(kernel_op)` reads the declarations (roles, barriers, views, TMEM regions,
  register tiles) and compiles each role into a small instruction tree whose scalar operands
  are closures over an environment (loop variables and trip-count symbols). Bounds that are
  structurally the same expression share one symbol in every role; `Kernel.assignments()`
  gives the representatives of every trip-count class that behaves differently (0, 1, fewer
  than the stages, the stages, one more, laps).
* `explore(k)` traces every role under every assignment (`Kernel.trace`); `model_of(ctx, op)`
  builds model and exploration once per compilation for both passes.
* `first_wait_free(k)` classifies barriers ("empty" ones: the first wait passes),
  `parities(k, fwf)` derives the parity of every wait, `accounting(k, runs, target)` checks
  role events per phase and derives hardware arrivals and transaction bytes,
  `role_findings(k)` checks who may complete and wait on each barrier.
* `simulate_all(k, fwf, exploration)` runs all roles against an abstract mbarrier machine with
  vector clocks (`Simulation`) and returns `Finding`s (deadlocks, races, phase lapping,
  uninitialised reads, ...), each in the author's terms.

Nothing here raises on bad input and nothing unrolls a loop with a huge trip count: static
counts beyond a few laps of the deepest pipeline are shortened to a representative with the
same residue modulo twice the lcm of the stage counts, and every run has an event budget.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain, product

from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cakec.dialects import cake

I32_MIN, I32_MAX = -(2**31), 2**31 - 1
MAX_ASSIGNMENTS = 64  # trip-count assignments explored per kernel
MAX_ELEMENTS = 4096  # mbarriers the model enumerates (32 KiB of them; no SMEM holds more)
EVENT_BUDGET = 40_000  # events per assignment, all roles together (about 0.2 s)
TOTAL_BUDGET = 120_000  # events over all assignments of one kernel
PARITY_LIST_MAX = 1024  # longest per-iteration parity list written on a wait

Env = dict
Expr = Callable[[Env], "int | None"]

# Event kinds of a role trace. READ_STAGE is a synchronous read of an SMEM stage by the role's
# threads (`lm.sum_sq`, `view[s].load()`): complete at its place in the program, unlike an
# MMA's operand reads.
WAIT, ARRIVE, COMMIT, TMA, MMA, READ_ACC, READ_STAGE = range(7)


def line_of(op: Operation) -> int:
    loc = op.location
    return loc.line.data if isinstance(loc, FileLineColLoc) else 0


def _name(op: Operation) -> str:
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

    def buffer(self, s: int) -> tuple[int, int, int]:
        """The bytes of stage s; views that alias a buffer share its key."""
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
                 "lb", "ub", "step", "iv", "body", "cond", "orelse", "runtime")

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


# ---- scalar expressions ------------------------------------------------------------------------


@dataclass
class ExprInfo:
    fn: Expr
    key: tuple
    runtime: bool  # depends on kernel parameters, block ids, dims or the SM count
    ivdep: bool  # depends on a loop variable
    lo: int
    hi: int
    text: str


def _c_rem(a: int, b: int) -> int | None:
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _floordiv(a: int, b: int) -> int | None:
    return None if b == 0 else a // b


def _ceildiv(a: int, b: int) -> int | None:
    return None if b == 0 else -(-a // b)


_BINARY: dict[type, tuple[str, Callable[[int, int], int | None]]] = {
    arith.AddiOp: ("+", lambda a, b: a + b),
    arith.SubiOp: ("-", lambda a, b: a - b),
    arith.MuliOp: ("*", lambda a, b: a * b),
    arith.FloorDivSIOp: ("//", _floordiv),
    arith.RemSIOp: ("%", _c_rem),  # remsi truncates, as the hardware does
    arith.CeilDivSIOp: ("lm.cdiv", _ceildiv),
    arith.MinSIOp: ("lm.min", min),
    arith.MaxSIOp: ("lm.max", max),
    arith.AndIOp: ("and", lambda a, b: a & b),
    arith.OrIOp: ("or", lambda a, b: a | b),
    arith.XOrIOp: ("^", lambda a, b: a ^ b),
}
_CMP = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]
_CMP_FN: list[Callable[[int, int], bool]] = [
    lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
    lambda a, b: a > b, lambda a, b: a >= b] * 2
# Runtime leaves: value range and the value used when no symbol pins them.
_LEAVES: dict[type, tuple[str, int, int, int]] = {
    cake.BlockIdOp: ("lm.block_id", 0, I32_MAX, 0),
    cake.NumBlocksOp: ("lm.num_blocks", 1, I32_MAX, 1),
    cake.SmCountOp: ("lm.sm_count", 1, 1024, 1),
}


def _interval(name: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Value range of a binary node from its operands' ranges (conservative)."""
    (alo, ahi), (blo, bhi) = a, b
    if name == "+":
        return alo + blo, ahi + bhi
    if name == "-":
        return alo - bhi, ahi - blo
    if name == "*":
        ps = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return min(ps), max(ps)
    if name in ("//", "lm.cdiv") and blo == bhi and blo > 0:
        f = _floordiv if name == "//" else _ceildiv
        return f(alo, blo) or 0, f(ahi, blo) or 0
    if name == "%" and blo == bhi and blo > 0:
        return (0 if alo >= 0 else -(blo - 1)), blo - 1
    if name == "lm.min":
        return min(alo, blo), min(ahi, bhi)
    if name == "lm.max":
        return max(alo, blo), max(ahi, bhi)
    return I32_MIN, I32_MAX


class Exprs:
    """Compiles SSA scalars to closures `env -> int | None` (None: not computable)."""

    def __init__(self) -> None:
        self.memo: dict[SSAValue, ExprInfo] = {}

    def __call__(self, v: SSAValue) -> ExprInfo:
        info = self.memo.get(v)
        if info is None:
            info = self._build(v)
            self.memo[v] = info
        return info

    def _build(self, v: SSAValue) -> ExprInfo:
        if isinstance(v, BlockArgument):
            return self._block_arg(v)
        op = v.owner
        assert isinstance(op, Operation)
        if isinstance(op, arith.ConstantOp):
            c = op.value.value.data if hasattr(op.value, "value") else 0
            c = int(c)
            return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c))
        if type(op) in _LEAVES:
            label, lo, hi, default = _LEAVES[type(op)]
            dim_attr = op.properties.get("dim")
            dim = "" if dim_attr is None else str(dim_attr.value.data)
            key = (label, dim)
            text = v.name_hint or f"{label}({dim})"
            return self._runtime(key, lambda env, d=default: d, lo, hi, text)
        if isinstance(op, cake.DimOp):
            t = self(op.tensor)
            idx = op.index.value.data
            key = ("dim", t.key, idx)
            return self._runtime(key, lambda env: 1, 0, I32_MAX,
                                 v.name_hint or f"{t.text}.shape[{idx}]")
        if type(op) in _BINARY:
            return self._binary(v, op)
        if isinstance(op, arith.CmpiOp):
            return self._cmp(v, op)
        if isinstance(op, arith.SelectOp):
            return self._select(v, op)
        return ExprInfo(lambda env: None, ("?", id(op)), True, False, I32_MIN, I32_MAX,
                        v.name_hint or "?")

    def _block_arg(self, v: BlockArgument) -> ExprInfo:
        parent = v.owner.parent_op() if isinstance(v.owner, Block) else None
        if isinstance(parent, cake.ForOp):
            # Loop variables live in the environment under their id: hashing an SSA value
            # goes through xDSL's Python-level __hash__, which dominates a trace otherwise.
            return ExprInfo(lambda env, k=id(v): env.get(k), ("iv", id(v)), False, True,
                            I32_MIN, I32_MAX, v.name_hint or "i")
        key = ("param", v.index)
        return self._runtime(key, lambda env: 1, I32_MIN, I32_MAX, v.name_hint or "param")

    @staticmethod
    def _runtime(key: tuple, default: Expr, lo: int, hi: int, text: str) -> ExprInfo:
        # A symbol assignment in the environment overrides the computed value; no loop
        # variable feeds this node, so its value is cached in the environment of a run.
        def fn(env: Env, key=key, default=default) -> int | None:
            r = env.get(key)
            if r is None:
                r = env[key] = default(env)
            return r
        return ExprInfo(fn, key, True, False, lo, hi, text)

    def _wrap(self, v: SSAValue, fn: Expr, key: tuple, ops: list[ExprInfo], lo: int, hi: int,
              text: str) -> ExprInfo:
        runtime = any(o.runtime for o in ops)
        ivdep = any(o.ivdep for o in ops)
        text = v.name_hint or text
        if runtime and not ivdep:
            return self._runtime(key, fn, lo, hi, text)
        if not runtime and not ivdep:
            c = fn({})
            if c is not None:
                return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c))
        return ExprInfo(fn, key, runtime, ivdep, lo, hi, text)

    def _binary(self, v: SSAValue, op: Operation) -> ExprInfo:
        name, f = _BINARY[type(op)]
        a, b = self(op.operands[0]), self(op.operands[1])

        def fn(env: Env, fa=a.fn, fb=b.fn, f=f) -> int | None:
            x = fa(env)
            if x is None:
                return None
            y = fb(env)
            return None if y is None else f(x, y)
        lo, hi = _interval(name, (a.lo, a.hi), (b.lo, b.hi))
        text = (f"{name}({a.text}, {b.text})" if name.startswith("lm.")
                else f"{_paren(a)} {name} {_paren(b)}")
        return self._wrap(v, fn, (name, a.key, b.key), [a, b], lo, hi, text)

    def _cmp(self, v: SSAValue, op: arith.CmpiOp) -> ExprInfo:
        p = op.predicate.value.data
        a, b = self(op.lhs), self(op.rhs)
        f = _CMP_FN[p]

        def fn(env: Env, fa=a.fn, fb=b.fn, f=f) -> int | None:
            x, y = fa(env), fb(env)
            return None if x is None or y is None else int(f(x, y))
        return self._wrap(v, fn, ("cmp", p, a.key, b.key), [a, b], 0, 1,
                          f"{_paren(a)} {_CMP[p]} {_paren(b)}")

    def _select(self, v: SSAValue, op: arith.SelectOp) -> ExprInfo:
        c, a, b = self(op.cond), self(op.lhs), self(op.rhs)

        def fn(env: Env, fc=c.fn, fa=a.fn, fb=b.fn) -> int | None:
            x = fc(env)
            return None if x is None else (fa(env) if x else fb(env))
        return self._wrap(v, fn, ("select", c.key, a.key, b.key), [c, a, b],
                          min(a.lo, b.lo), max(a.hi, b.hi),
                          f"{a.text} if {c.text} else {b.text}")

    def affine(self, v: SSAValue) -> tuple[int, SSAValue | None, int] | None:
        """`v` as a*base + c over one runtime base that no loop variable feeds, or None."""
        info = self(v)
        if not info.runtime and not info.ivdep:
            return 0, None, info.fn({}) or 0
        op = v.owner
        if isinstance(op, (arith.AddiOp, arith.SubiOp, arith.MuliOp)):
            x, y = self.affine(op.operands[0]), self.affine(op.operands[1])
            if x is not None and y is not None:
                combined = _combine(type(op), x, y)
                if combined is not None:
                    return combined
        if info.runtime and not info.ivdep:
            return 1, v, 0
        return None

    def bases(self, v: SSAValue) -> Iterator[SSAValue]:
        """The maximal runtime sub-expressions of `v` that no loop variable feeds."""
        info = self(v)
        if info.runtime and not info.ivdep:
            a = self.affine(v)
            yield a[1] if a is not None and a[1] is not None else v
        elif info.runtime and isinstance(v.owner, Operation):
            for o in v.owner.operands:
                yield from self.bases(o)


def _paren(e: ExprInfo) -> str:
    return f"({e.text})" if " " in e.text and not e.text.startswith("lm.") else e.text


def _combine(kind: type, x: tuple[int, SSAValue | None, int],
             y: tuple[int, SSAValue | None, int]) -> tuple[int, SSAValue | None, int] | None:
    (a1, b1, c1), (a2, b2, c2) = x, y
    if kind is arith.MuliOp:
        if b1 is None:
            return c1 * a2, b2, c1 * c2
        if b2 is None:
            return a1 * c2, b1, c1 * c2
        return None
    if b1 is not None and b2 is not None and b1 is not b2:
        return None
    sign = 1 if kind is arith.AddiOp else -1
    return a1 + sign * a2, b1 or b2, c1 + sign * c2


# ---- trip-count symbols ------------------------------------------------------------------------


@dataclass
class Symbol:
    """A runtime base expression whose value the model chooses (a trip-count symbol)."""

    key: tuple
    text: str
    lo: int
    hi: int
    reps: set[int] = field(default_factory=set)


def _contains(key: tuple, sub: tuple) -> bool:
    """Whether the expression `key` has `sub` as a proper sub-expression."""
    return any(isinstance(x, tuple) and (x == sub or _contains(x, sub)) for x in key)


def trip_count(lb: int, ub: int, step: int) -> int:
    return max(0, -(-(ub - lb) // step)) if step > 0 else 0


# ---- the kernel model --------------------------------------------------------------------------


class Kernel:
    """Declarations, compiled role programs and trip-count symbols of one `cake.kernel`."""

    def __init__(self, op: cake.KernelOp):
        self.op = op
        self.exprs = Exprs()
        self.roles: list[Role] = []
        self.barriers: list[Barrier] = []
        self.views: list[View] = []
        self.accs: list[Acc] = []
        self.pools: list[cake.SmemOp] = []
        self.tmems: list[cake.TmemOp] = []
        self.elem_barrier: list[tuple[Barrier, int]] = []
        self.total_elems = 0  # mbarriers of all barrier arrays
        self.programs: list[list[Instr]] = []
        self.symbols: dict[tuple, Symbol] = {}
        self.undecidable: list[Instr] = []  # instructions whose operands never evaluate
        self._role_of: dict[Operation, Role] = {}
        self._barrier_of: dict[Operation, Barrier] = {}
        self._view_of: dict[Operation, View] = {}
        self._acc_of: dict[Operation, Acc] = {}
        self._read_declarations()
        self.programs = [self._compile(list(op.body.block.ops), r, inside=False)
                         for r in self.roles]
        self.depths = sorted({b.count for b in self.barriers} | {v.stages for v in self.views}
                             | {1})
        self.period = 2 * _lcm(self.depths)
        self._find_symbols()

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

    # ---- declarations --------------------------------------------------------------------------

    def _read_declarations(self) -> None:
        ops = list(self.op.body.block.ops)
        for o in ops:
            if isinstance(o, cake.RoleOp):
                ons = [on for on in ops if isinstance(on, cake.OnRoleOp) and on.role.owner is o]
                r = Role(o, _name(o), len(self.roles), tuple(o.warps.get_values()),
                         cake.runs_single_thread(ons))
                self.roles.append(r)
                self._role_of[o] = r
        for o in ops:
            if isinstance(o, cake.BarrierOp):
                b = Barrier(o, _name(o), o.count.value.data, o.init_count.value.data,
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
                v = View(o, _name(o), t.stages.data,
                         nbytes.value.data if nbytes is not None else t.num_bytes(),
                         o.offset.value.data, o.pool.owner)
                self.views.append(v)
                self._view_of[o] = v
            elif isinstance(o, (cake.TmemOp, cake.RegsOp)):
                owner = (self._role_of[o.role.owner].index if isinstance(o, cake.RegsOp)
                         else None)
                a = Acc(o, _name(o), len(self.accs), owner)
                self.accs.append(a)
                self._acc_of[o] = a
                if isinstance(o, cake.TmemOp):
                    self.tmems.append(o)

    def barrier_of(self, v: SSAValue) -> Barrier:
        return self._barrier_of[v.owner]

    def view_of(self, v: SSAValue) -> View:
        return self._view_of[v.owner]

    def acc_of(self, v: SSAValue) -> Acc | None:
        return self._acc_of.get(v.owner)

    # ---- compiling role programs ---------------------------------------------------------------

    def _compile(self, ops: list[Operation], role: Role, inside: bool) -> list[Instr]:
        out: list[Instr] = []
        for o in ops:
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
            elif isinstance(o, cake.IfOp):
                then = self._compile(list(o.then_region.block.ops), role, inside)
                orelse = self._compile(list(o.else_region.block.ops), role, inside)
                if then or orelse:
                    c = self.exprs(o.cond)
                    out.append(Instr(o, "branch", cond=c, body=then, orelse=orelse,
                                     runtime=c.runtime))
            elif inside:
                ins = self._effect(o)
                if ins is not None:
                    out.append(ins)
        return out

    def _effect(self, o: Operation) -> Instr | None:
        e = self.exprs
        if isinstance(o, (cake.WaitOp, cake.ArriveOp, cake.CommitOp)):
            kind = {cake.WaitOp: WAIT, cake.ArriveOp: ARRIVE, cake.CommitOp: COMMIT}[type(o)]
            return Instr(o, kind, barrier=self.barrier_of(o.barrier), stage=e(o.stage))
        if isinstance(o, cake.ASYNC_LOADS):  # copy_load: a TMA load without tx bytes
            view = self.view_of(o.view)
            tx = view.stage_bytes if isinstance(o, cake.TmaLoadOp) else 0
            return Instr(o, TMA, barrier=self.barrier_of(o.barrier), stage=e(o.stage),
                         view=view, bytes=tx)
        if isinstance(o, cake.MmaOp):
            return Instr(o, MMA, acc=self.acc_of(o.acc), a=self._operand(o.a),
                         b=self._operand(o.b), init=e(o.init))
        if isinstance(o, cake.ConvertOp):
            acc = self.acc_of(o.source)
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, cake.TmaStoreOp):
            acc = self.acc_of(o.value)
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, cake.ArgminOp):  # reads the accumulator its tile expression names
            acc = next(filter(None, map(self.acc_of, _tile_leaves(o.source))), None)
            return Instr(o, READ_ACC, acc=acc) if acc is not None else None
        if isinstance(o, (cake.SumSqOp, cake.StageLoadOp)):
            stage = self._operand(o.source)
            return Instr(o, READ_STAGE, a=stage) if stage is not None else None
        return None

    def _operand(self, v: SSAValue) -> tuple[View, ExprInfo, Operation] | None:
        op = v.owner
        if isinstance(op, cake.StageOp):
            return self.view_of(op.view), self.exprs(op.index), op
        return None

    # ---- trip-count symbols --------------------------------------------------------------------

    def classes(self) -> list[int]:
        """Trip counts that behave differently: 0, 1, and around each pipeline depth."""
        out = {0, 1}
        for s in self.depths[-3:]:
            out |= {s - 1, s, s + 1, 2 * s + 1}
        return sorted(out)

    def _symbol(self, v: SSAValue) -> Symbol:
        info = self.exprs(v)
        sym = self.symbols.get(info.key)
        if sym is None:
            sym = Symbol(info.key, info.text, info.lo, info.hi)
            self.symbols[info.key] = sym
        return sym

    def _find_symbols(self) -> None:
        classes = self.classes()
        for ins in self._walk_all():
            if ins.kind == "loop" and ins.runtime:
                self._loop_symbols(ins, classes)
            elif ins.kind == "branch" and ins.runtime:
                self._branch_symbols(ins.op.cond, classes)
        # A base built from another symbol (lm.min(2, k_tiles) next to k_tiles) is computed
        # from it rather than chosen freely, so the two never disagree.
        keys = set(self.symbols)
        for key in list(self.symbols):
            if any(other != key and _contains(key, other) for other in keys):
                del self.symbols[key]
        for sym in self.symbols.values():
            reps = {v for v in sym.reps if sym.lo <= v <= sym.hi}
            sym.reps = reps or {min(max(1, sym.lo), sym.hi)}

    def _walk_all(self) -> Iterator[Instr]:
        for prog in self.programs:
            yield from _walk(prog)

    def _loop_symbols(self, ins: Instr, classes: list[int]) -> None:
        op: cake.ForOp = ins.op
        e = self.exprs
        lb, ub, step = e(op.lb), e(op.ub), e(op.step)
        ub_aff, lb_aff = e.affine(op.ub), e.affine(op.lb)
        step0 = step.fn({}) if not step.runtime else None
        if ub.runtime and not lb.runtime and ub_aff and ub_aff[1] is not None and step0 \
                and ub_aff[0] > 0 and not lb.ivdep:
            a, base, c = ub_aff
            lb0 = lb.fn({}) or 0
            self._symbol(base).reps |= {_ceildiv(lb0 + r * step0 - c, a) for r in classes}
            return
        if lb.runtime and not ub.runtime and lb_aff and lb_aff[1] is not None and step0 \
                and lb_aff[0] > 0 and not ub.ivdep:
            a, base, c = lb_aff
            ub0 = ub.fn({}) or 0
            self._symbol(base).reps |= {(ub0 - r * step0 - c) // a for r in classes}
            return
        for v, other in ((op.lb, ub), (op.ub, lb)):
            for base in e.bases(v):
                # A persistent loop, range(lm.block_id(0), work, lm.num_blocks(0)): the CTA's
                # index only shifts where its items start, and `work`'s classes already give
                # every trip count. Varying block_id too made the explored assignments pair a
                # large block_id with a small `work`: zero trips, the loop never checked.
                if other.runtime and isinstance(base.owner, (cake.BlockIdOp, cake.NumBlocksOp)):
                    continue
                self._symbol(base).reps |= set(classes)
        for base in e.bases(op.step):
            sym = self._symbol(base)
            sym.reps.add(max(1, sym.lo))

    def _branch_symbols(self, cond: SSAValue, classes: list[int]) -> None:
        e = self.exprs
        op = cond.owner
        if isinstance(op, arith.CmpiOp):
            x, y = e.affine(op.lhs), e.affine(op.rhs)
            for p, q in ((x, y), (y, x)):
                if p and q and p[1] is not None and q[1] is None and p[0] != 0:
                    a, base, c = p
                    t = q[2]
                    self._symbol(base).reps |= {(t + d - c) // a for d in (-1, 0, 1)}
                    return
        if isinstance(op, (arith.AndIOp, arith.OrIOp, arith.XOrIOp)):
            for o in op.operands:
                self._branch_symbols(o, classes)
            return
        for base in e.bases(cond):
            self._symbol(base).reps |= set(classes)

    def assignments(self) -> list[dict[tuple, int]]:
        """Symbol assignments to explore, smallest first, at most MAX_ASSIGNMENTS."""
        syms = sorted(self.symbols.values(), key=lambda s: s.text)
        if not syms:
            return [{}]
        reps = [sorted(s.reps) for s in syms]
        total = math.prod(len(r) for r in reps)
        if total <= MAX_ASSIGNMENTS:
            combos = list(product(*reps))
        else:
            # One symbol varies at a time around the largest representative of the others,
            # plus the diagonal: every class of every symbol is seen at least once.
            top = tuple(r[-1] for r in reps)
            combos = [top[:i] + (v,) + top[i + 1:] for i, r in enumerate(reps) for v in r]
            width = max(len(r) for r in reps)
            combos += [tuple(r[min(j, len(r) - 1)] for r in reps) for j in range(width)]
            combos = list(dict.fromkeys(combos))[:MAX_ASSIGNMENTS]
        combos.sort(key=lambda c: (sum(c), c))
        return [{s.key: v for s, v in zip(syms, c)} for c in combos]

    def describe(self, env: Env) -> str:
        """' with k_tiles = 1' for the symbols of an assignment ('' when none)."""
        parts = [f"{s.text} = {env[k]}" for k, s in sorted(self.symbols.items(),
                                                            key=lambda kv: kv[1].text)
                 if k in env]
        return " with " + ", ".join(parts) if parts else ""

    # ---- running one role ----------------------------------------------------------------------

    def trace(self, role: int, env: Env, budget: list[int], oob: list[Finding],
              shortened: set[Operation] | None = None, exact_up_to: int = 0
              ) -> list[tuple] | None:
        """The events of one role under `env`; None if an operand cannot be evaluated or
        the budget ran out. Out-of-range stage indices are appended to `oob`; the ops that
        ran inside a shortened loop are added to `shortened`. Loops of at most `exact_up_to`
        (and at most four laps of the deepest pipeline) iterations run in full."""
        tracer = _Tracer(self, env, budget, oob, shortened, exact_up_to)
        try:
            tracer.run(self.programs[role])
        except _Stop:
            return None
        return tracer.events


class _Stop(Exception):
    """Abandons a trace (an operand that cannot be evaluated, or the event budget)."""


class _Tracer:
    def __init__(self, k: Kernel, env: Env, budget: list[int], oob: list[Finding],
                 shortened: set[Operation] | None, exact_up_to: int):
        self.k = k
        self.env = dict(env)
        self.base_env = env
        self.budget = budget
        self.oob = oob
        self.shortened = shortened
        self.exact = max(exact_up_to, 4 * k.depths[-1])
        self.inside_short = 0  # depth of shortened loops around the current op
        self.events: list[tuple] = []
        self.seg = 0  # accounting segment: a wait or a loop iteration starts a new one
        self.loops: list[tuple[SSAValue, int]] = []  # enclosing loop variables and values
        self.memo: dict[int, int] = {}  # values of this iteration, by ExprInfo id

    def value(self, e: ExprInfo, ins: Instr) -> int:
        # Several ops of one iteration share a stage expression: evaluate it once.
        v = self.memo.get(id(e))
        if v is None:
            v = e.fn(self.env)
            if v is None:
                self.k.undecidable.append(ins)
                raise _Stop()
            self.memo[id(e)] = v
        return v

    def index(self, ins: Instr, s: int, count: int, what: str, decl: Operation) -> bool:
        if 0 <= s < count:
            return True
        where = self.k.describe(self.base_env)
        loops = ", ".join(f"{iv.name_hint or 'i'} = {v}" for iv, v in self.loops)
        self.oob.append(Finding(
            "CAKE-S008", ins.op,
            f"stage {s} is out of range for {what} with {count} "
            f"{'stage' if what.startswith('view') else 'element'}{'s' if count != 1 else ''}"
            + (f" (when {loops}{where.replace(' with ', ', ')})" if loops else
               (f" ({where.strip()})" if where else "")),
            [(decl, f"`{_name(decl)}` is declared here")],
            help=(f"keep the stage in [0, {count}), e.g. `k % {count}`" if count > 1 else
                  "it has a single element: use stage=0 (the default)")))
        return False

    def stage_of(self, ins: Instr, opnd: tuple | None) -> tuple[View, int] | None:
        """(view, stage) an operand reads in this iteration; None when out of range."""
        if opnd is None:
            return None
        view, idx, _ = opnd
        s = self.value(idx, ins)
        return (view, s) if self.index(ins, s, view.stages, f"view `{view.name}`",
                                       view.op) else None

    def run(self, prog: list[Instr]) -> None:
        ev = self.events
        for ins in prog:
            kind = ins.kind
            if kind == "loop":
                self.loop(ins)
                continue
            if kind == "branch":
                self.run(ins.body if self.value(ins.cond, ins) else ins.orelse)
                continue
            self.budget[0] -= 1
            if self.budget[0] < 0:
                raise _Stop()
            if self.inside_short and self.shortened is not None:
                self.shortened.add(ins.op)
            if kind == MMA:
                ev.append((MMA, ins, self.stage_of(ins, ins.a), self.stage_of(ins, ins.b),
                           bool(self.value(ins.init, ins))))
                continue
            if kind == READ_STAGE:
                stage = self.stage_of(ins, ins.a)
                if stage is not None:
                    ev.append((READ_STAGE, ins, stage))
                continue
            if kind == READ_ACC:
                ev.append((READ_ACC, ins))
                continue
            b = ins.barrier
            s = self.value(ins.stage, ins)
            if kind == TMA and not self.index(ins, s, ins.view.stages, f"view `{ins.view.name}`",
                                              ins.view.op):
                continue
            if not self.index(ins, s, b.count, f"barrier `{b.name}`", b.op):
                continue
            ev.append((kind, ins, b.base + s, self.seg, s))
            if kind == WAIT:
                self.seg += 1

    def never_ends(self, ins: Instr, step: int) -> None:
        where = self.k.describe(self.base_env)
        self.oob.append(Finding(
            "CAKE-S019", ins.op,
            f"the loop at line {line_of(ins.op)} steps by {step}"
            + (f" ({where.strip()})" if where else "") + ": it never ends",
            help="the step must be at least 1 for every launch, e.g. `lm.max(step, 1)`"))

    def loop(self, ins: Instr) -> None:
        lb, ub, step = (self.value(x, ins) for x in (ins.lb, ins.ub, ins.step))
        if step <= 0:
            if lb < ub:
                self.never_ends(ins, step)
            return
        n = trip_count(lb, ub, step)
        iv = ins.iv
        p = self.k.period
        if n <= self.exact or n < 3 * p:
            iterations: Iterator[int] = iter(range(n))
            short = 0
        else:
            # The first period, then a tail with the same residue modulo the period: ring
            # positions and phase parities end where the full loop leaves them.
            skip = (n - 2 * p) // p * p
            iterations = chain(range(p), range(p + skip, n))
            short = 1
        self.inside_short += short
        key = id(iv)
        self.loops.append((iv, lb))
        for j in iterations:
            self.loops[-1] = (iv, lb + j * step)
            self.env[key] = lb + j * step
            self.memo = {}
            self.seg += 1
            self.run(ins.body)
        self.loops.pop()
        self.inside_short -= short
        self.env.pop(key, None)
        self.memo = {}
        self.seg += 1


def _lcm(xs: list[int]) -> int:
    out = 1
    for x in xs:
        out = out * x // math.gcd(out, x)
        if out > 64:  # stage counts without a small common period: fall back to the largest
            return 2 * max(xs)
    return out


def _walk(prog: list[Instr]) -> Iterator[Instr]:
    for ins in prog:
        yield ins
        if ins.kind in ("loop", "branch"):
            yield from _walk(ins.body)
            if ins.orelse:
                yield from _walk(ins.orelse)


# ---- structural analyses -----------------------------------------------------------------------

_VERB = {ARRIVE: "`lm.arrive`", COMMIT: "`lm.commit`", TMA: "a TMA load"}


def _writes(ins: Instr) -> set[object]:
    if ins.kind == TMA:
        return {ins.view.buffer(0)}
    if ins.kind == MMA and ins.acc is not None:
        return {ins.acc}
    return set()


def _tile_leaves(v: SSAValue) -> list[SSAValue]:
    """The tiles a broadcasting tile expression (cake.tile_binary) is built from."""
    op = v.owner
    if isinstance(op, cake.TileBinaryOp):
        return _tile_leaves(op.lhs) + _tile_leaves(op.rhs)
    return [v]


def _stage_reader(ins: Instr) -> tuple[str, str]:
    """How findings name a read of a stage, and how its role releases the stage after it."""
    if ins.kind == MMA:
        return "MMA", "`lm.commit` after its MMA"
    what = "`lm.sum_sq`" if isinstance(ins.op, cake.SumSqOp) else "`load()`"
    return what, "`lm.arrive` after that read"


def _reads(ins: Instr) -> set[object]:
    if ins.kind in (MMA, READ_STAGE):
        return {o[0].buffer(0) for o in (ins.a, ins.b) if o is not None}
    if ins.kind == READ_ACC:
        return {ins.acc}
    return set()


def first_wait_free(k: Kernel) -> list[bool]:
    """Per barrier: True for an "empty"-style barrier, whose consumers' first wait passes.

    A barrier is empty-style when its consumer, after waiting on it, writes resources (view
    stages by TMA, accumulators by MMA) that its producer read before arriving on it. When
    the producer reads nothing (a pure hand-back), the data flow is silent and the structure
    decides: the consumer, after its wait, fills by TMA a barrier that the producer waits
    on, so this barrier hands slots back to the data source. A barrier that TMA loads
    complete, or that orders reads after writes, is full-style."""
    out = []
    for b in k.barriers:
        guarded: set[object] = set()
        released: set[object] = set()
        feeds_producer = False
        fills = False
        for r, prog in enumerate(k.programs):
            waited = False
            reads: set[object] = set()
            for ins in _walk(prog):
                if ins.barrier is b:
                    waited |= ins.kind == WAIT
                    fills |= ins.kind == TMA
                    if ins.kind in (ARRIVE, COMMIT):
                        released |= reads
                if waited:
                    guarded |= _writes(ins)
                    if (ins.kind == TMA and ins.barrier is not b and r in b.cons
                            and set(ins.barrier.cons) & set(b.prod)):
                        feeds_producer = True
                reads |= _reads(ins)
        out.append(not fills and (bool(guarded & released) or feeds_producer))
    return out


def role_findings(k: Kernel) -> list[Finding]:
    """Barrier role mismatches (S005/S006) and register tiles used outside their role (S018)."""
    out: list[Finding] = []
    for b in k.barriers:
        out.extend(_mismatches(k, b))
    seen: set[tuple[int, int]] = set()
    for r, prog in enumerate(k.programs):
        for ins in _walk(prog):
            acc = ins.acc if ins.kind in (MMA, READ_ACC) else None
            if acc is None or acc.owner is None or acc.owner == r or (acc.index, r) in seen:
                continue
            seen.add((acc.index, r))
            owner = k.roles[acc.owner].name
            verb = "accumulates into" if ins.kind == MMA else "reads"
            out.append(Finding(
                "CAKE-S017", ins.op,
                f"role {k.roles[r].name} {verb} register tile `{acc.name}`, which lives in the "
                f"registers of role {owner}",
                [(acc.op, f"`{acc.name}` is declared here for role {owner}")],
                help=f"do this inside `with {owner}:`, or hand the data over through SMEM or "
                     "TMEM"))
    return out


def _mismatches(k: Kernel, b: Barrier) -> list[Finding]:
    completes: dict[int, Instr] = {}
    waits: dict[int, Instr] = {}
    for r, prog in enumerate(k.programs):
        for ins in _walk(prog):
            if ins.barrier is not b:
                continue
            target = waits if ins.kind == WAIT else completes
            target.setdefault(r, ins)
    bad_c = {r: i for r, i in completes.items() if r not in b.prod}
    bad_w = {r: i for r, i in waits.items() if r not in b.cons}
    if not bad_c and not bad_w:
        return []
    names = lambda rs: "[" + ", ".join(k.roles[r].name for r in sorted(rs)) + "]"
    if (bad_c and bad_w and set(completes) <= b.cons and set(waits) <= b.prod):
        rc, rw = min(bad_c), min(bad_w)
        return [Finding(
            "CAKE-S005", b.op,
            f"barrier `{b.name}` declares prod={names(b.prod)} and cons={names(b.cons)}, but "
            f"role {k.roles[rc].name} completes it (line {line_of(bad_c[rc].op)}) and role "
            f"{k.roles[rw].name} waits on it (line {line_of(bad_w[rw].op)}): producers and "
            "consumers are swapped",
            [(bad_c[rc].op, f"role {k.roles[rc].name} completes `{b.name}` here"),
             (bad_w[rw].op, f"role {k.roles[rw].name} waits on `{b.name}` here")],
            help=f"write prod={names(completes)}, cons={names(waits)}")]
    out = []
    decl = (b.op, f"`{b.name}` is declared here with prod={names(b.prod)}, "
                  f"cons={names(b.cons)}")
    for r, ins in sorted(bad_c.items()):
        who = k.roles[r].name
        out.append(Finding(
            "CAKE-S005", ins.op,
            f"role {who} completes barrier `{b.name}` ({_VERB[ins.kind]}) but is not one of its "
            f"producers {names(b.prod)}", [decl],
            help=f"add {who} to prod=[...] of `{b.name}`, or complete the barrier that role "
                 f"{who} produces"))
    for r, ins in sorted(bad_w.items()):
        who = k.roles[r].name
        out.append(Finding(
            "CAKE-S006", ins.op,
            f"role {who} waits on barrier `{b.name}` but is not one of its consumers "
            f"{names(b.cons)}", [decl],
            help=f"add {who} to cons=[...] of `{b.name}`, or wait on the barrier that role "
                 f"{who} consumes"))
    return out


@dataclass
class Accounting:
    """Per barrier: hardware arrivals and transaction bytes per phase, and the findings."""

    arrivals: list[int]
    tx_bytes: list[int]
    findings: list[Finding]


def accounting(k: Kernel, runs: list[Run], target: str) -> Accounting:
    """Groups each role's completions of one barrier element that no wait or loop iteration
    separates (one phase's worth), over every explored trip count, and checks them against
    `init_count`."""
    per_barrier: dict[int, dict[int, list[list[Instr]]]] = {}
    for run in runs:
        groups: dict[tuple[int, int, int], list[Instr]] = {}
        for r, tr in enumerate(run.traces):
            for ev in tr or ():
                if ev[0] in (ARRIVE, COMMIT, TMA):
                    groups.setdefault((r, ev[2], ev[3]), []).append(ev[1])
        for (r, e, _), g in groups.items():
            b = k.elem_barrier[e][0]
            per_barrier.setdefault(b.base, {}).setdefault(r, []).append(g)
    acct = Accounting([], [], [])
    for b in k.barriers:
        roles = per_barrier.get(b.base, {})
        typical = {r: _typical(gs) for r, gs in roles.items()}
        events = sum(len(g) for g in typical.values())
        nbytes = sum(i.bytes for g in typical.values() for i in g if i.kind == TMA)
        acct.arrivals.append(_arrivals(k, b, typical, events, target))
        acct.tx_bytes.append(nbytes)
        acct.findings.extend(_account(k, b, roles, typical, events))
    return acct


def _arrivals(k: Kernel, b: Barrier, typical: dict[int, list[Instr]], events: int,
              target: str) -> int:
    """Hardware arrivals per phase: init_count role events, each one arrival except a commit
    on sm_90a, where every warpgroup of the committing role commits its own wgmma group, an
    arrive by a role whose every warp runs (each warp arrives once its lanes are done), and a
    copy_load, where every thread of the role arrives once its own cp.async copies land."""
    def per_event(r: int, i: Instr) -> int:
        role = k.roles[r]
        if isinstance(i.op, cake.CopyLoadOp):
            return 32 * len(role.warps)
        if i.kind == ARRIVE and not role.single_thread:
            return len(role.warps)
        return role.warpgroups if i.kind == COMMIT and target == "sm_90a" else 1

    if events:
        hw = sum(per_event(r, i) for r, g in typical.items() for i in g)
        return b.init_count * hw // events
    # No trip count completes it: every completion op of the barrier tells the same.
    kinds = {per_event(r, i) for r, prog in enumerate(k.programs) for i in _walk(prog)
             if i.barrier is b and i.kind != WAIT}
    return b.init_count * (max(kinds) if kinds else 1)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _typical(gs: list[list[Instr]]) -> list[Instr]:
    sizes = Counter(len(g) for g in gs)
    size = sizes.most_common(1)[0][0]
    return next(g for g in gs if len(g) == size)


def _account(k: Kernel, b: Barrier, roles: dict[int, list[list[Instr]]],
             typical: dict[int, list[Instr]], events: int) -> list[Finding]:
    # The per-phase transaction-byte limit is a hardware fact: verify-conformance (H016).
    decl = (b.op, f"`{b.name}` is declared here with init_count={b.init_count}")
    if any(len(g) != len(typical[r]) for r, gs in roles.items() for g in gs):
        return []  # stage indices that disagree: the simulation shows what goes wrong
    if events and events != b.init_count:
        lines = sorted({line_of(i.op) for g in typical.values() for i in g})
        where = ", ".join(str(x) for x in lines)
        if events > b.init_count:
            r = max(typical)
            g = typical[r]
            at = g[min(len(g) - 1, b.init_count)] if len(typical) == 1 else g[0]
            msg = (f"barrier `{b.name}` expects {_count(b.init_count, 'arrival')} per phase "
                   f"(init_count={b.init_count}) but receives {events} (line{'s' if len(lines) > 1 else ''} "
                   f"{where}); each TMA load, `lm.arrive` and `lm.commit` counts as one")
            return [Finding("CAKE-S007", at.op, msg, [decl],
                            help=f"set init_count={events} on `{b.name}`")]
        first = next(iter(typical.values()))[0]
        return [Finding(
            "CAKE-S007", b.op,
            f"barrier `{b.name}` expects {_count(b.init_count, 'arrival')} per phase "
            f"(init_count={b.init_count}) but receives only {events} (line{'s' if len(lines) > 1 else ''} "
            f"{where}); its phases never complete",
            [(first.op, f"`{b.name}` is completed here")],
            help=f"set init_count={events} on `{b.name}`, or add the missing arrival")]
    return []


# ---- the abstract machine ----------------------------------------------------------------------

# Finding categories, most fundamental first: only the first non-empty one is reported, so one
# mistake does not also surface as its consequences.
_CATEGORIES = ("deadlock", "race", "lapping", "uninit", "unconsumed")


class Simulation:
    """All roles against the mbarrier machine under one trip-count assignment.

    Vector clocks have one component per role (program order), one per barrier element (how
    many of its phases are known complete: TMA data lands with its phase) and one per role for
    its MMA completions (advanced only by `lm.commit`, whose arrival carries it). Roles run
    round-robin, each until it blocks, so producers run as far ahead as the protocol lets them.
    """

    def __init__(self, k: Kernel, fwf: list[bool], traces: list[list[tuple]], where: str):
        self.k, self.traces, self.where = k, traces, where
        R, E = len(k.roles), k.n_elems
        self.R, self.E, self.D = R, E, 2 * R + E
        self.fwf = [int(fwf[k.barriers.index(b)]) for b, _ in k.elem_barrier]
        self.init = [b.init_count for b, _ in k.elem_barrier]
        self.vc = [[0] * self.D for _ in range(R)]
        self.pos = [0] * R
        self.completed = [0] * E
        self.pending = [0] * E
        self.pend_vc = [[0] * self.D for _ in range(E)]
        self.phase_vc: list[list[list[int]]] = [[] for _ in range(E)]
        self.completer: list[list[tuple[int, Instr, int]]] = [[] for _ in range(E)]
        self.waits: list[dict[int, list[int]]] = [{} for _ in range(E)]
        self.consumers: list[set[int]] = [set() for _ in range(E)]
        for r, tr in enumerate(traces):
            for ev in tr:
                if ev[0] == WAIT:
                    self.consumers[ev[2]].add(r)
        self.commits = [0] * R
        self.outstanding: list[list[list]] = [[] for _ in range(R)]
        self.stage: dict[tuple[int, int, int], list] = {}  # [fills, reads since the last]
        self.acc: dict[int, list] = {}  # [last write, reads since]
        self.unwritten: list[list] = []
        #: per role: the fill each `view[s].load()` last read (for CAKE-S021)
        self.vec_fill: list[dict[Operation, list]] = [{} for _ in range(R)]
        self.found: dict[str, dict[tuple[str, int], Finding]] = {c: {} for c in _CATEGORIES}

    # ---- driver --------------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        traces, pos = self.traces, self.pos
        progress = True
        while progress:
            progress = False
            for r, tr in enumerate(traces):
                i, n = pos[r], len(tr)
                while i < n:
                    ev = tr[i]
                    if ev[0] == WAIT and not self._ready(r, ev[2]):
                        break
                    self._step(r, ev)
                    i += 1
                if i != pos[r]:
                    pos[r] = i
                    progress = True
        if any(pos[r] < len(tr) for r, tr in enumerate(traces)):
            self._deadlock()
        else:
            self._at_exit()
        return self.verdict()[1]

    def verdict(self) -> tuple[int, list[Finding]]:
        """The most fundamental category found (its rank in _CATEGORIES) and its findings."""
        for rank, c in enumerate(_CATEGORIES):
            if self.found[c]:
                return rank, list(self.found[c].values())
        return len(_CATEGORIES), []

    def _report(self, cat: str, f: Finding, other: Operation | None = None) -> None:
        # One finding per place; refills racing the same read are one mistake, not several.
        found = self.found[cat]
        if other is not None:
            if (f.code, id(other)) in found:
                return
            found[(f.code, id(other))] = f
        found.setdefault((f.code, id(f.op)), f)

    def _ready(self, r: int, e: int) -> bool:
        n = len(self.waits[e].get(r, ()))
        return self.completed[e] >= n + 1 - self.fwf[e]

    def _step(self, r: int, ev: tuple) -> None:
        vc = self.vc[r]
        vc[r] += 1
        kind = ev[0]
        if kind == WAIT:
            self._wait(r, ev)
        elif kind == TMA:
            self._tma(r, ev)
            self._arrive(r, ev, vc[:])
        elif kind == ARRIVE:
            self._arrive(r, ev, vc[:])
        elif kind == COMMIT:
            self.commits[r] += 1
            for rec in self.outstanding[r]:
                rec[2] = self.commits[r]
            self.outstanding[r] = []
            arr = vc[:]
            arr[self.R + self.E + r] = self.commits[r]
            self._arrive(r, ev, arr)
        elif kind == MMA:
            self._mma(r, ev)
        elif kind == READ_STAGE:
            self._read_stage(r, ev[1], *ev[2])
        else:
            self._read_acc(r, ev)
            self._check_companions(r, ev[1])
            self._retire_mmas(r, ev[1].acc)

    def _check_companions(self, r: int, ins: Instr) -> None:
        """A per-column vector read from a staged view (`scq[s].load()`) combined with an
        accumulator must come from the transaction that brought the MMA's `b` operand: when
        both stages complete on the same barrier, the same element and phase (CAKE-S021).
        A vector staged through another barrier (a bias loaded once) is not compared."""
        acc = ins.acc
        source = getattr(ins.op, "source", None)
        if acc is None or source is None:
            return
        writes = self.acc.get(acc.index, [[]])[0]
        mine = [w for w in writes if w[0] == r]
        mma_fill = mine[-1][5] if mine else None
        if mma_fill is None:
            return
        for leaf in _tile_leaves(source):
            vec = leaf.owner
            fill = self.vec_fill[r].get(vec) if isinstance(vec, cake.StageLoadOp) else None
            if fill is None:
                continue
            (b, i), (b2, i2) = self.k.elem_barrier[fill[2]], self.k.elem_barrier[mma_fill[2]]
            if b is not b2 or (fill[2], fill[3]) == (mma_fill[2], mma_fill[3]):
                continue
            mma = mine[-1][3]
            self._report("race", Finding(
                "CAKE-S021", vec,
                f"`{fill[4].view.name}` read here was filled with phase {fill[3]} of "
                f"{b.elem(i)}, but the MMA at line {line_of(mma.op)} that wrote `{acc.name}` "
                f"read `{mma_fill[4].view.name}` from phase {mma_fill[3]} of {b2.elem(i2)}: "
                f"the two do not belong to the same tile{self.where}",
                [(mma.op, f"the MMA into `{acc.name}` reads its `b` operand here"),
                 (fill[4].op, f"`{fill[4].view.name}` is filled here")],
                help="read the vector from the stage of the MMA's operand (the same stage "
                     "index), so that each tile is combined with its own per-column terms"))

    def _retire_mmas(self, r: int, acc: Acc | None) -> None:
        """Reading its own register accumulator makes role r wait for the MMA that wrote it
        (wgmma.wait_group: groups complete in issue order), so that MMA's and every earlier
        MMA's operand reads end here, as at a commit: a plain `lm.arrive` after the read may
        release their stages."""
        if acc is None or acc.owner != r:
            return
        writes = self.acc.get(acc.index, [[]])[0]
        mine = [w for w in writes if w[0] == r]
        if not mine:
            return
        clock = mine[-1][1]
        done = [rec for rec in self.outstanding[r] if rec[1] <= clock]
        if not done:
            return
        self.commits[r] += 1
        for rec in done:
            rec[2] = self.commits[r]
        self.outstanding[r] = [rec for rec in self.outstanding[r] if rec[1] > clock]
        self.vc[r][self.R + self.E + r] = self.commits[r]

    # ---- barriers ------------------------------------------------------------------------------

    def _wait(self, r: int, ev: tuple) -> None:
        e = ev[2]
        lst = self.waits[e].setdefault(r, [])
        m = len(lst) + 1 - self.fwf[e]  # completed phases this wait needs
        vc = self.vc[r]
        if m >= 1:
            _join(vc, self.phase_vc[e][m - 1])
        if self.completed[e] > m:
            self._lapped(e, m, r, ev[1])
        lst.append(vc[r])

    def _arrive(self, r: int, ev: tuple, arr: list[int]) -> None:
        e = ev[2]
        self.pending[e] += 1
        _join(self.pend_vc[e], arr)
        if self.pending[e] < self.init[e]:
            return
        q = self.completed[e]
        pvc = self.pend_vc[e]
        pvc[self.R + e] = q + 1
        self.phase_vc[e].append(pvc)
        self.completer[e].append((r, ev[1], ev[4]))
        self.completed[e] = q + 1
        self.pending[e] = 0
        self.pend_vc[e] = [0] * self.D
        # Completing phase q is safe only after every consumer observed phase q - 1.
        n = q - 1 + self.fwf[e]
        for c in self.consumers[e]:
            lst = self.waits[e].get(c, ())
            if 0 <= n < len(lst) and pvc[c] < lst[n]:
                self._lapped(e, q, c, self.traces[c][lst[n] - 1][1])

    def _lapped(self, e: int, m: int, c: int, wait: Instr) -> None:
        b, i = self.k.elem_barrier[e]
        p, ins, _ = self.completer[e][m]
        prod, cons = self.k.roles[p].name, self.k.roles[c].name
        seen = (f"has waited for phase {m - 1} (line {line_of(wait.op)})" if m >= 1 else
                f"has made its first wait on it (line {line_of(wait.op)}), which passes only "
                "while phase 0 is incomplete")
        self._report("lapping", Finding(
            "CAKE-S010", ins.op,
            f"role {prod} completes phase {m} of {b.elem(i)} at line {line_of(ins.op)} before "
            f"role {cons} {seen}{self.where}; the phase bit wraps and role {cons} misses a "
            "phase",
            [(wait.op, f"role {cons} waits on {b.elem(i)} here")],
            help=f"make role {prod} wait until role {cons} releases {b.elem(i)} (an empty "
                 "barrier) before completing it again, or use more stages"))

    # ---- data ----------------------------------------------------------------------------------

    def _tma(self, w: int, ev: tuple) -> None:
        ins: Instr = ev[1]
        e, s = ev[2], ev[4]
        vc = self.vc[w]
        st = self.stage.setdefault(ins.view.buffer(s), [[], []])
        for rec in st[1]:
            if not self._after_end(vc, rec):
                self._war(w, ins, rec, s)
        if st[0] and not st[1]:
            prev = st[0][-1]
            if prev[0] != w and vc[self.R + prev[2]] < prev[3] + 1:
                self._report("race", Finding(
                    "CAKE-S003", ins.op,
                    f"role {self.k.roles[w].name} refills {ins.view.name}[{s}] at line "
                    f"{line_of(ins.op)} before the TMA load of role {self.k.roles[prev[0]].name} "
                    f"into it (line {line_of(prev[4].op)}) is known to be complete{self.where}",
                    [(prev[4].op, "the other load is issued here")],
                    help="order the two loads through a barrier the first one completes"))
        p = self.completed[e]
        st[0].append([w, vc[w], e, p, ins])
        st[1] = []

    def _after_end(self, vc: list[int], rec: list) -> bool:
        """Whether a clock `vc` is ordered after the end of the access `rec`:
        [role, clock, end (commit count, None while pending, -1 for a synchronous read), ...]."""
        q, clock, end = rec[0], rec[1], rec[2]
        if end == -1:
            return vc[q] >= clock
        return end is not None and vc[self.R + self.E + q] >= end

    def _release(self, q: int, clock: int, known: int) -> Instr | None:
        """The plain `lm.arrive` of role q after its event at `clock` that another role's
        knowledge (`known`, a clock of q) reaches: a release before async completion."""
        tr = self.traces[q]
        for i in range(min(known, len(tr)) - 1, clock - 1, -1):
            if tr[i][0] == ARRIVE:
                return tr[i][1]
        return None

    def _war(self, w: int, ins: Instr, rec: list, s: int) -> None:
        q, clock, _, reader, _, unwritten = rec
        roles = self.k.roles
        name = f"{ins.view.name}[{s}]"
        if unwritten:
            self._report("race", Finding(
                "CAKE-S002", reader.op,
                f"role {roles[q].name} reads {name} at line {line_of(reader.op)}, which role "
                f"{roles[w].name} fills at line {line_of(ins.op)} with nothing ordering the "
                f"read after it{self.where}",
                [(ins.op, f"role {roles[w].name} fills {name} here")],
                help=f"wait on `{ins.barrier.name}` (the barrier this load completes) before "
                     "reading the stage"))
            return
        rel = self._release(q, clock, self.vc[w][q])
        if rel is not None:
            self._report("race", Finding(
                "CAKE-S004", rel.op,
                f"`lm.arrive` at line {line_of(rel.op)} releases {name} while the MMA at line "
                f"{line_of(reader.op)} may still read it{self.where}",
                [(reader.op, "this MMA reads the stage asynchronously"),
                 (ins.op, f"role {roles[w].name} refills {name} here")],
                help=f"use `lm.commit({rel.barrier.name}, stage=...)`, which arrives only once "
                     "the role's MMAs have completed, or arrive after reading the MMA's "
                     "register accumulator (the read waits for it)"))
            return
        what, release = _stage_reader(reader)
        self._report("race", Finding(
            "CAKE-S003", ins.op,
            f"role {roles[w].name} refills {name} at line {line_of(ins.op)} while role "
            f"{roles[q].name} may still be reading it ({what} at line {line_of(reader.op)})"
            f"{self.where}",
            [(reader.op, f"role {roles[q].name} reads {name} here")],
            help=f"before refilling, wait on a barrier that role {roles[q].name} releases with "
                 f"{release} (an empty barrier)"))

    def _mma(self, r: int, ev: tuple) -> None:
        ins: Instr = ev[1]
        vc = self.vc[r]
        fills = [self._read_stage(r, ins, *opnd) if opnd is not None else None
                 for opnd in (ev[2], ev[3])]
        acc = ins.acc
        if acc is None:
            return
        st = self.acc.setdefault(acc.index, [[], []])
        if not ev[4] and not st[0]:
            self._report("uninit", Finding(
                "CAKE-S012", ins.op,
                f"the MMA at line {line_of(ins.op)} accumulates into `{acc.name}` (init=False) "
                f"before any MMA initialised it{self.where}",
                [(acc.op, f"`{acc.name}` is declared here")],
                help="pass `init=True` on the first MMA into it, e.g. `init=(k == 0)`"))
        for rec in st[1]:
            if rec[0] != r and not self._after_end(vc, rec):
                self._overwrite(r, ins, rec, acc)
        prev = st[0][-1] if st[0] else None
        if prev is not None and prev[0] != r and not self._after_end(vc, prev):
            self._acc_race(r, ins, prev, acc, "overwrites")
        rec = [r, vc[r], None, ins, ev[4], fills[1]]
        st[0].append(rec)
        st[1] = []
        self.outstanding[r].append(rec)

    def _overwrite(self, w: int, ins: Instr, read: list, acc: Acc) -> None:
        roles = self.k.roles
        q = roles[read[0]].name
        self._report("race", Finding(
            "CAKE-S003", ins.op,
            f"role {roles[w].name} overwrites `{acc.name}` with the MMA at line {line_of(ins.op)} "
            f"before role {q} has read the previous result (line {line_of(read[3].op)})"
            f"{self.where}",
            [(read[3].op, f"role {q} reads `{acc.name}` here")],
            help=f"wait on a barrier that role {q} arrives on after reading `{acc.name}` (an "
                 "empty barrier, whose first wait passes)"), other=read[3].op)

    def _read_stage(self, r: int, ins: Instr, view: View, s: int) -> list | None:
        """A read of stage s: an MMA operand (ends at the role's next commit) or a synchronous
        read (ends where it stands). Returns the fill it reads when that is well ordered."""
        vc = self.vc[r]
        st = self.stage.setdefault(view.buffer(s), [[], []])
        writes = st[0]
        rec = [r, vc[r], None if ins.kind == MMA else -1, ins, (view, s), not writes]
        st[1].append(rec)
        if ins.kind == MMA:
            self.outstanding[r].append(rec)
        if not writes:
            self.unwritten.append(rec)
            return None
        # The newest fill this read is ordered after; a newer one is a refill that raced it.
        seen = next((i for i in range(len(writes) - 1, -1, -1)
                     if vc[self.R + writes[i][2]] >= writes[i][3] + 1), None)
        if seen == len(writes) - 1:
            if isinstance(ins.op, cake.StageLoadOp):
                self.vec_fill[r][ins.op] = writes[seen]
            return writes[seen]
        name = f"{view.name}[{s}]"
        roles = self.k.roles
        if seen is not None:
            w = writes[seen + 1]
            reader, release = _stage_reader(ins)
            self._report("race", Finding(
                "CAKE-S003", w[4].op,
                f"role {roles[w[0]].name} refills {name} at line {line_of(w[4].op)} before role "
                f"{roles[r].name} has read its previous contents ({reader} at line "
                f"{line_of(ins.op)}){self.where}",
                [(ins.op, f"role {roles[r].name} reads {name} here")],
                help=f"before refilling, wait on a barrier that role {roles[r].name} releases "
                     f"with {release} (an empty barrier)"), other=ins.op)
            return
        w = writes[0]
        b, i = self.k.elem_barrier[w[2]]
        self._report("race", Finding(
            "CAKE-S002", ins.op,
            f"role {roles[r].name} reads {name} at line {line_of(ins.op)} before the TMA load "
            f"that fills it (line {line_of(w[4].op)}, completing phase {w[3]} of {b.elem(i)}) "
            f"is known to be complete{self.where}",
            [(w[4].op, f"role {roles[w[0]].name} fills {name} here")],
            help=f"add `lm.wait({b.name}, stage=...)` for that stage before line "
                 f"{line_of(ins.op)}"))

    def _read_acc(self, r: int, ev: tuple) -> None:
        ins: Instr = ev[1]
        acc = ins.acc
        vc = self.vc[r]
        st = self.acc.setdefault(acc.index, [[], []])
        writes = st[0]
        read = [r, vc[r], -1, ins]
        st[1].append(read)
        if not writes:
            self._report("uninit", Finding(
                "CAKE-S013", ins.op,
                f"role {self.k.roles[r].name} reads `{acc.name}` at line {line_of(ins.op)} but "
                f"no MMA has written it{self.where}",
                [(acc.op, f"`{acc.name}` is declared here")],
                help="make sure an MMA with init=True runs first; a K loop that may run 0 "
                     "times needs at least one iteration, e.g. `lm.max(lm.cdiv(K, 64), 1)`"))
            return
        last = writes[-1]
        if last[0] == r or self._after_end(vc, last):
            return
        # Ordered after an older result, but an MMA with init=True started a new one since:
        # that MMA overwrote the accumulator before this read.
        seen = next((i for i in range(len(writes) - 1, -1, -1)
                     if self._after_end(vc, writes[i])), None)
        newer = None if seen is None else next(
            (w for w in writes[seen + 1:] if w[4]), None)
        if newer is not None:
            self._overwrite(newer[0], newer[3], read, acc)
        else:
            self._acc_race(r, ins, last, acc, "reads")

    def _acc_race(self, r: int, ins: Instr, w: list, acc: Acc, verb: str) -> None:
        roles = self.k.roles
        rel = self._release(w[0], w[1], self.vc[r][w[0]])
        if rel is not None:
            self._report("race", Finding(
                "CAKE-S004", rel.op,
                f"`lm.arrive` at line {line_of(rel.op)} signals role {roles[r].name} while the "
                f"MMA at line {line_of(w[3].op)} may still write `{acc.name}`{self.where}",
                [(w[3].op, "this MMA writes the accumulator asynchronously"),
                 (ins.op, f"role {roles[r].name} {verb} `{acc.name}` here")],
                help=f"use `lm.commit({rel.barrier.name}, stage=...)`, which arrives only once "
                     "the role's MMAs have completed"))
            return
        self._report("race", Finding(
            "CAKE-S002", ins.op,
            f"role {roles[r].name} {verb} `{acc.name}` at line {line_of(ins.op)} while the MMA "
            f"at line {line_of(w[3].op)} (role {roles[w[0]].name}) may still write it"
            f"{self.where}",
            [(w[3].op, f"role {roles[w[0]].name} writes `{acc.name}` here")],
            help=f"have role {roles[w[0]].name} `lm.commit` to a barrier after its MMAs and wait "
                 f"on that barrier in role {roles[r].name} first"))

    # ---- the end -------------------------------------------------------------------------------

    def _at_exit(self) -> None:
        roles = self.k.roles
        for rec in self.unwritten:
            view, s = rec[4]
            if not self.stage[view.buffer(s)][0]:
                self._report("uninit", Finding(
                    "CAKE-S014", rec[3].op,
                    f"role {roles[rec[0]].name} reads {view.name}[{s}] at line "
                    f"{line_of(rec[3].op)} but nothing ever writes it{self.where}",
                    [(view.op, f"`{view.name}` is declared here")],
                    help="fill the stage with a TMA load before reading it, or read a stage "
                         "that is filled"))
        for e in range(self.E):
            self._unobserved(e)

    def _unobserved(self, e: int) -> None:
        """A completed phase of a full-style barrier that a consumer never waits for: its
        data (or the result it announces) is never used, and a TMA copy may still be in
        flight when the block exits. Trailing releases of empty barriers are normal."""
        b, i = self.k.elem_barrier[e]
        done = self.completed[e]
        if self.fwf[e] or not done:
            return
        # Declared consumers that never wait on e matter only for TMA data: a release that
        # nobody ever waits for is pointless but harmless.
        waiters = self.waits[e] or {c: [] for c in b.cons}
        for c, lst in sorted(waiters.items()):
            if len(lst) >= done:
                continue
            p, (_, ins, stage) = len(lst), self.completer[e][len(lst)]
            if not lst and ins.kind != TMA:
                continue
            cons = self.k.roles[c].name
            if ins.kind == TMA:
                what = (f"the TMA load at line {line_of(ins.op)} into {ins.view.name}[{stage}] "
                        f"completes phase {p} of {b.elem(i)}")
                fix = (f"wait on `{b.name}` in role {cons} before using the data, or drop the "
                       "load: the block must not exit while a copy may still be in flight")
            else:
                what = (f"{_VERB[ins.kind]} at line {line_of(ins.op)} completes phase {p} of "
                        f"{b.elem(i)}")
                fix = (f"make role {cons} wait for every phase of `{b.name}` (compare the trip "
                       "counts of the two roles)")
            self._report("unconsumed", Finding(
                "CAKE-S018", ins.op,
                f"{what}, which role {cons} never waits for{self.where}",
                [(b.op, f"`{b.name}` is declared here")],
                help=fix), other=b.op)
            return

    def _deadlock(self) -> None:
        blocked = [(r, self.traces[r][self.pos[r]]) for r in range(self.R)
                   if self.pos[r] < len(self.traces[r])]
        roots = [(r, ev) for r, ev in blocked if not self._may_arrive(ev[2])]
        # A wait nothing can satisfy any more is a root cause, reported each; waits that only
        # wait on other blocked roles form a cycle, reported once at its first wait.
        for r, ev in roots or blocked[:1]:
            self._report("deadlock", self._blocked(r, ev, blocked))

    def _may_arrive(self, e: int) -> bool:
        """Whether some unfinished role still has a completion of element e ahead of it."""
        return any(ev[0] in (ARRIVE, COMMIT, TMA) and ev[2] == e
                   for r, tr in enumerate(self.traces) for ev in tr[self.pos[r]:])

    def _blocked(self, r: int, ev: tuple, blocked: list[tuple[int, tuple]]) -> Finding:
        k = self.k
        e, ins = ev[2], ev[1]
        b, i = k.elem_barrier[e]
        m = len(self.waits[e].get(r, ())) + 1 - self.fwf[e]
        head = (f"role {k.roles[r].name} waits on {b.elem(i)} (phase {m - 1}) at line "
                f"{line_of(ins.op)}{self.where}")
        notes: list[tuple[Operation | None, str]] = []
        waiting = [(q, qev) for q, qev in blocked if q != r and any(
            x[0] in (ARRIVE, COMMIT, TMA) and x[2] == e for x in self.traces[q][self.pos[q]:])]
        if waiting:
            q, qev = waiting[0]
            qb, qi = k.elem_barrier[qev[2]]
            qm = len(self.waits[qev[2]].get(q, ())) + 1 - self.fwf[qev[2]]
            story = (f"role {k.roles[q].name}, which completes it, is itself waiting on "
                     f"{qb.elem(qi)} (phase {qm - 1}) at line {line_of(qev[1].op)}")
            notes.extend((x[1].op, f"role {k.roles[x_r].name} waits here")
                         for x_r, x in blocked if x_r != r)
            fix = ("break the cycle: one of these waits must be satisfiable before its role "
                   "completes what the others wait for")
        else:
            story, fix = self._completions(e, b, i)
            if self.completer[e]:
                last = self.completer[e][-1][1]
                notes.append((last.op, f"the last completion of {b.elem(i)} is here"))
        notes.append((b.op, f"`{b.name}` is declared here"))
        return Finding("CAKE-S001", ins.op, f"deadlock: {head}; {story}", notes, help=fix)

    def _completions(self, e: int, b: Barrier, i: int) -> tuple[str, str]:
        k = self.k
        c = self.completed[e]
        who = sorted({k.roles[p].name for p, _, _ in self.completer[e]})
        fix = ("every wait needs a phase completion: check that the roles' trip counts and "
               "stage indices match")
        if c:
            phases = "phase 0" if c == 1 else ("phases 0 and 1" if c == 2 else
                                               f"phases 0 to {c - 1}")
            last = self.completer[e][-1][1]
            return (f"role {', '.join(who)} completes only {phases}, at line "
                    f"{line_of(last.op)}"), fix
        if self.pending[e]:
            return (f"{b.elem(i)} receives only {self.pending[e]} of its {b.init_count} "
                    "arrivals for phase 0"), fix
        arrivers = {k.roles[r].name for r, prog in enumerate(k.programs) for x in _walk(prog)
                    if x.barrier is b and x.kind != WAIT}
        if arrivers:
            return f"no role ever completes {b.elem(i)}", fix
        return (f"no role ever arrives on `{b.name}`",
                f"complete `{b.name}` in a producer role (`lm.arrive`, `lm.commit` or a TMA "
                f"load with barrier={b.name})")


def _join(dst: list[int], src: list[int]) -> None:
    for j, x in enumerate(src):
        if x > dst[j]:
            dst[j] = x


# ---- entry points ------------------------------------------------------------------------------


@dataclass
class Run:
    """The role traces of one trip-count assignment (None for a role that could not run)."""

    env: Env
    traces: list[list[tuple] | None]
    oob: list[Finding]

    @property
    def complete(self) -> bool:
        return all(t is not None for t in self.traces)


@dataclass
class Exploration:
    runs: list[Run]
    partial: str  # why some assignment could not be explored ("" when all were)


def explore(k: Kernel) -> Exploration:
    """Traces every role under every trip-count assignment, within the event budgets."""
    runs: list[Run] = []
    partial = ""
    total = TOTAL_BUDGET
    for env in k.assignments():
        oob: list[Finding] = []
        budget = [min(EVENT_BUDGET, total)]
        traces = [k.trace(r, env, budget, oob) for r in range(len(k.roles))]
        total -= min(EVENT_BUDGET, total) - max(budget[0], 0)
        runs.append(Run(env, traces, oob))
        if oob or all(t is not None for t in traces):
            continue
        if budget[0] < 0 or total <= 0:
            # The other assignments are as large: stop rather than stall.
            return Exploration(runs, f"running it{k.describe(env)} takes more than "
                                     f"{EVENT_BUDGET} events")
        bad = k.undecidable[-1]
        partial = partial or (f"the operands of the op at line {line_of(bad.op)} cannot be "
                              f"evaluated{k.describe(env)}")
    return Exploration(runs, partial)


def model_of(ctx: object, kernel: cake.KernelOp) -> tuple[Kernel, Exploration]:
    """The model and exploration of `kernel`, built once per compilation: derive-barriers and
    verify-safety share them (the passes between them only add attributes)."""
    cache: dict[cake.KernelOp, tuple[Kernel, Exploration]] | None = getattr(
        ctx, "cake_protocol", None)
    if cache is None:
        cache = {}
        setattr(ctx, "cake_protocol", cache)
    if kernel not in cache:
        k = Kernel.build(kernel)
        ex = (Exploration([], f"it declares {k.total_elems} mbarriers, more than the "
                              f"{MAX_ELEMENTS} the model enumerates") if k.too_large
              else explore(k))
        cache[kernel] = (k, ex)
    return cache[kernel]


def simulate_all(k: Kernel, fwf: list[bool], ex: Exploration) -> list[Finding]:
    """Simulates every explored assignment and returns the findings of the most fundamental
    category any of them shows (an out-of-range index, then deadlocks, races, lapping,
    uninitialised reads, unconsumed phases), from the smallest assignment showing it."""
    oob = next((run.oob for run in ex.runs if run.oob), None)
    if oob:
        return _unique(oob)
    best: tuple[int, list[Finding]] = (len(_CATEGORIES) + 1, [])
    for run in ex.runs:
        if not run.complete:
            continue
        sim = Simulation(k, fwf, run.traces, k.describe(run.env))  # type: ignore[arg-type]
        sim.run()
        rank, found = sim.verdict()
        if found and rank < best[0]:
            best = (rank, found)
    return best[1]


def _unique(fs: list[Finding]) -> list[Finding]:
    seen: dict[int, Finding] = {}
    for f in fs:
        seen.setdefault(id(f.op), f)
    return list(seen.values())


def parities(k: Kernel, fwf: list[bool]) -> dict[Operation, list[int] | str]:
    """The parity of every wait: per dynamic instance (a list) when the loops around it and
    before it have static trip counts, else a closed form or "tracked at run time"."""
    out: dict[Operation, list[int] | str] = {}
    for r, prog in enumerate(k.programs):
        static = _static_waits(prog)
        shortened: set[Operation] = set()
        # Room for the longest list written; a longer role gets closed forms instead.
        trace = k.trace(r, {}, [16 * PARITY_LIST_MAX], [], shortened, PARITY_LIST_MAX)
        lists: dict[Operation, list[int]] = {}
        counts: dict[int, int] = {}
        for ev in trace or ():
            if ev[0] == WAIT:
                n = counts.get(ev[2], 0)
                counts[ev[2]] = n + 1
                lists.setdefault(ev[1].op, []).append((n & 1) ^ int(fwf[
                    k.barriers.index(ev[1].barrier)]))
        for ins, loops in _waits_with_loops(prog, []):
            got = lists.get(ins.op, [])
            if (trace is not None and static.get(ins.op) and ins.op not in shortened
                    and len(got) <= PARITY_LIST_MAX):
                out[ins.op] = got
            else:
                out[ins.op] = _closed_form(k, prog, ins, loops,
                                           fwf[k.barriers.index(ins.barrier)])
    return out


def _static_waits(prog: list[Instr]) -> dict[Operation, bool]:
    """Waits whose instance count and position do not depend on a runtime value: no runtime
    loop or branch encloses them or precedes them with a wait on the same barrier."""
    out: dict[Operation, bool] = {}
    tainted: set[int] = set()

    def visit(block: list[Instr], dynamic: bool) -> None:
        for ins in block:
            if ins.kind in ("loop", "branch"):
                inner = dynamic or bool(ins.runtime)
                visit(ins.body, inner)
                visit(ins.orelse or [], inner)
                if inner:
                    tainted.update(id(x.barrier) for x in _walk(ins.body + (ins.orelse or []))
                                   if x.kind == WAIT)
            elif ins.kind == WAIT:
                out[ins.op] = not dynamic and id(ins.barrier) not in tainted
    visit(prog, False)
    return out


def _waits_with_loops(block: list[Instr], loops: list[Instr]
                      ) -> Iterator[tuple[Instr, list[Instr]]]:
    for ins in block:
        if ins.kind == "loop":
            yield from _waits_with_loops(ins.body, loops + [ins])
        elif ins.kind == "branch":
            yield from _waits_with_loops(ins.body + (ins.orelse or []), loops + [ins])
        elif ins.kind == WAIT:
            yield ins, loops


def _closed_form(k: Kernel, prog: list[Instr], ins: Instr, loops: list[Instr],
                 fwf: bool) -> str:
    """`(k // S) & 1` when the wait is the role's only wait on its barrier, inside one loop
    from 0 with step 1, at stage `k % S` (S = barrier count) or at a constant stage."""
    unknown = "tracked at run time"
    same = [x for x in _walk(prog) if x.kind == WAIT and x.barrier is ins.barrier]
    if len(loops) != 1 or loops[0].kind != "loop" or len(same) != 1:
        return unknown
    loop = loops[0]
    if loop.lb.fn({}) != 0 or loop.step.fn({}) != 1 or loop.lb.runtime or loop.step.runtime:
        return unknown
    iv = loop.iv
    var = iv.name_hint or "i"
    stage = ins.op.stage
    op = stage.owner
    count = ins.barrier.count
    if (isinstance(op, arith.RemSIOp) and op.lhs is iv
            and k.exprs(op.rhs).key == ("c", count)):
        form = f"({var} // {count}) & 1"
    elif k.exprs(stage).key[0] == "c":
        form = f"{var} & 1"
    else:
        return unknown
    return f"({form}) ^ 1" if fwf else form
