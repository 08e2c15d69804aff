"""Running the role programs: the tracer, the trip-count exploration, and the shared model.

* `trace_role(k, role, env, ...)` runs one role of a `Kernel` under a trip-count assignment
  and returns its events (waits, arrivals, commits, TMA loads, MMAs, reads), reporting
  out-of-range stage indices (S008) and loops that never end (S019) as `Finding`s. Each
  role program is compiled once per kernel into one function per instruction (`_steps`).
* `explore(k)` traces every role under every launch of launch.py (parameter, grid and block
  values);
  `model_of(ctx, op)` builds model and exploration once per compilation for both passes
  (`derive-barriers` and `verify-safety`, which releases them: `release_model`).

Nothing here raises on bad input and nothing unrolls a loop with a huge trip count: static
counts beyond a few laps of the deepest pipeline are shortened to a representative with the
same residue modulo twice the lcm of the stage counts, and every run has an event budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain

from xdsl.ir import Operation

from cakec.dialects import cake
from cakec.passes.protocol.exprs import Env, ExprInfo
from cakec.passes.protocol.launch import Launches, launches_of, trip_count
from cakec.passes.protocol.model import (
    ACC_WRITE, MMA, READ_ACC, READ_STAGE, SKIP, TILE_READ, TILE_WRITE, TMA, WAIT,
    WRITE_STAGE, Finding, Instr, Kernel, View, line_of, name_of,
)
from cakec.passes.protocol.tracekey import Shift, shift_keys, signatures

#: Events per assignment (all roles together) and over all assignments of one kernel. What
#: they cost: the 64-stage persistent GEMM mutant (gemm_bf16.cake with `count=64` on `full`)
#: stops at a launch of more than 40,000 events (CAKE-S020) after tracing 75,398 events over
#: 95 launches; its verify takes 0.54 s of CPU in-process: derive-barriers 0.22 s (tracing
#: 0.12 s, accounting 0.05 s), verify-safety 0.32 s (nearly all simulation; medians of 5,
#: 2026-12-05, loaded machine).
EVENT_BUDGET = 40_000
TOTAL_BUDGET = 120_000
#: mbarriers up to which those budgets hold: an event's vector-clock work grows with the
#: kernel's mbarrier count, so beyond it the budgets shrink in proportion (the model's time
#: stays bounded for any `count=`)
CLOCK_ELEMENTS = 256


#: Before one iteration of a loop: (events so far, `seg`, iterations numbered, budget ticks
#: since the loop began).
Mark = tuple[int, int, int, int]


@dataclass
class TopLoop:
    """The top-level loop of a role with a shift key (tracekey.py), as one trace meets it: the
    trace records `marks`, one before each iteration; with `resume` = (events, marks, j) of
    an earlier trace under the same key but another trip count, it starts the loop at
    iteration j, taking the events, marks and state before it from that trace (the
    iterations before j run the same events in both) instead of running them again."""

    loop: Instr
    marks: list[Mark] = field(default_factory=list)
    resume: tuple[list[tuple], list[Mark], int] | None = None


def trace_role(k: Kernel, role: int, env: Env, budget: list[int], oob: list[Finding],
               shortened: set[Operation] | None = None, exact_up_to: int = 0,
               where: "str | Callable[[], str]" = "",
               top: TopLoop | None = None) -> list[tuple] | None:
    """The events of one role under `env`; None if an operand cannot be evaluated or
    the budget ran out. Out-of-range stage indices are appended to `oob` (naming the launch
    as `where`, or as what it returns: built only for a finding); the ops that ran inside a
    shortened loop are added to `shortened`. Loops of at most `exact_up_to` (and at most
    four laps of the deepest pipeline) iterations run in full. `top`: the role's top-level
    loop, whose iterations are marked or resumed (`TopLoop`)."""
    tracer = _Tracer(k, env, budget, oob, shortened, exact_up_to, where, top)
    if k.traced is None:
        k.traced = [_steps(prog) for prog in k.programs]
    try:
        tracer.run(k.traced[role])
    except _Stop:
        return None
    return tracer.events


#: One instruction of a role program, compiled: traces it (appends its events) when called.
Step = Callable[["_Tracer"], None]


def _steps(prog: list[Instr]) -> list[Step]:
    """Each instruction of `prog` as a function that traces it: its kind and operands are
    dispatched once, here, rather than at each of its events."""
    return [_step(ins) for ins in prog]


def _tick(t: "_Tracer", ins: Instr) -> None:
    """One event of the budget; an op inside a shortened loop is recorded."""
    budget = t.budget
    budget[0] -= 1
    if budget[0] < 0:
        raise _Stop()
    if t.inside_short and t.shortened is not None:
        t.shortened.add(ins.op)


def _constant(e: ExprInfo | None) -> int | None:
    """The value of an operand that no launch or loop variable feeds (None otherwise, and for
    a constant that cannot be evaluated: the tracer then stops at it, as for any other)."""
    if e is None or e.runtime or e.ivdep:
        return None
    return e.fn({})


def _step(ins: Instr) -> Step:
    kind = ins.kind
    if kind == "loop":
        body, name = _steps(ins.body), ins.iv.name_hint or "i"
        # constant bounds are evaluated here, once (most loops start at 0 and step by 1)
        bounds = (_constant(ins.lb), _constant(ins.ub), _constant(ins.step))
        return lambda t: t.loop(ins, body, name, bounds)
    if kind == "branch":
        then, orelse = _steps(ins.body), _steps(ins.orelse or [])
        return lambda t: t.run(then if t.value(ins.cond, ins) else orelse)
    if kind == MMA:
        a, b, init = ins.a, ins.b, ins.init

        def mma(t: _Tracer) -> None:
            _tick(t, ins)
            loops = t.loops
            t.events.append((MMA, ins, t.stage_of(ins, a), t.stage_of(ins, b),
                             bool(t.value(init, ins)), loops[-1] if loops else None, t.it,
                             t.seg))
        return mma
    if kind == TILE_WRITE:
        def tile_write(t: _Tracer) -> None:
            _tick(t, ins)
            # an assignment (no `init`) always starts afresh
            t.events.append((TILE_WRITE, ins, ins.init is None or bool(t.value(ins.init, ins)),
                             t.step()))
        return tile_write
    if kind == TILE_READ or kind == ACC_WRITE:
        def plain(t: _Tracer) -> None:
            _tick(t, ins)
            t.events.append((kind, ins))
        return plain
    if kind == READ_STAGE or kind == WRITE_STAGE:
        def stage(t: _Tracer) -> None:
            _tick(t, ins)
            stage = t.stage_of(ins, ins.a)
            if stage is not None:
                t.events.append((kind, ins, stage, t.it, t.seg))
        return stage
    if kind == READ_ACC:
        def read_acc(t: _Tracer) -> None:  # an assignment names its step if it discards sums
            _tick(t, ins)
            t.events.append((READ_ACC, ins, t.it, t.seg,
                             t.step() if ins.dest is not None else None))
        return read_acc
    b = ins.barrier
    stages = ins.view.stages if kind == TMA else b.count
    if kind == SKIP:
        def skip(t: _Tracer) -> None:
            _tick(t, ins)
            s = t.value(ins.stage, ins)
            if not 0 <= s < b.count:
                t.index(ins, s, b.count, f"barrier `{b.name}`", b.op)
                return
            # One event per ring position passed over: stage, stage + 1, ... (wrapping).
            n = t.value(ins.count, ins)
            t.budget[0] -= max(n, 0)
            if t.budget[0] < 0:
                raise _Stop()
            t.events.extend((SKIP, ins, b.base + (s + i) % b.count, t.seg, (s + i) % b.count)
                            for i in range(max(n, 0)))
        return skip
    # Waits, arrivals, commits and TMA loads are most of every trace: their step inlines the
    # budget tick and the stage's evaluation (a constant stage is evaluated here, once).
    op, expr, fixed, count, base = ins.op, ins.stage, _constant(ins.stage), b.count, b.base
    tma, wait = kind == TMA, kind == WAIT

    def barrier_event(t: _Tracer) -> None:
        budget = t.budget
        budget[0] -= 1
        if budget[0] < 0:
            raise _Stop()
        if t.inside_short and t.shortened is not None:
            t.shortened.add(op)
        if fixed is not None:
            s = fixed
        elif t.staged is expr:
            s = t.stage
        else:
            s = expr.fn(t.env)
            if s is None:
                t.k.undecidable.append(ins)
                raise _Stop()
            t.staged, t.stage = expr, s
        # Ranges checked here: the messages are only built for a finding.
        if tma and not 0 <= s < stages:
            t.index(ins, s, stages, f"view `{ins.view.name}`", ins.view.op)
            return
        if not 0 <= s < count:
            t.index(ins, s, count, f"barrier `{b.name}`", b.op)
            return
        t.events.append((kind, ins, base + s, t.seg, s))
        if wait:
            t.seg += 1
    return barrier_event


def _exact(k: Kernel, exact_up_to: int) -> int:
    """Trip counts up to which a loop runs in full whatever its period."""
    return max(exact_up_to, 4 * k.depths[-1])


def _in_full(n: int, exact: int, period: int) -> bool:
    """Whether a loop of n iterations runs them all (else it is shortened to its first period
    and a tail with the same residue, `_Tracer.loop`)."""
    return n <= exact or n < 3 * period


class _Stop(Exception):
    """Abandons a trace (an operand that cannot be evaluated, or the event budget)."""


class _Tracer:
    # Slots: every event reads and writes several of these (a slot is found without a dict).
    __slots__ = ("k", "env", "launch", "budget", "oob", "shortened", "exact", "top",
                 "inside_short", "events", "seg", "loops", "it", "iterations", "values",
                 "staged", "stage")

    def __init__(self, k: Kernel, env: Env, budget: list[int], oob: list[Finding],
                 shortened: set[Operation] | None, exact_up_to: int,
                 where: "str | Callable[[], str]", top: TopLoop | None):
        self.k = k
        self.env = dict(env)
        self.launch = where
        self.budget = budget
        self.oob = oob
        self.shortened = shortened
        self.exact = _exact(k, exact_up_to)
        self.top = top
        self.inside_short = 0  # depth of shortened loops around the current op
        self.events: list[tuple] = []
        self.seg = 0  # accounting segment: a wait or a loop iteration starts a new one
        #: the enclosing loops' variables (their names) and values
        self.loops: list[tuple[str, int]] = []
        #: which iteration an event is in: the enclosing loops' values, numbered in order of
        #: first appearance (what is read of them is whether two events share an iteration:
        #: numbers make block 1's trace equal to block 0's when only tile indices differ)
        self.it = 0
        self.iterations: dict[tuple[int, ...], int] = {(): 0}
        self.values: tuple[int, ...] = ()
        #: the stage expression evaluated last and its value, until a loop variable changes:
        #: a wait, its TMA loads, an MMA's operands and its commit name one stage in a row
        self.staged: ExprInfo | None = None
        self.stage = 0

    def value(self, e: ExprInfo, ins: Instr) -> int:
        v = e.fn(self.env)
        if v is None:
            self.k.undecidable.append(ins)
            raise _Stop()
        return v

    @property
    def where(self) -> str:
        """The launch, as findings name it."""
        return self.launch if isinstance(self.launch, str) else self.launch()

    def index(self, ins: Instr, s: int, count: int, what: str, decl: Operation) -> bool:
        if 0 <= s < count:
            return True
        where = self.where
        loops = ", ".join(f"{name} = {v}" for name, v in self.loops)
        self.oob.append(Finding(
            "CAKE-S008", ins.op,
            f"stage {s} is out of range for {what} with {count} "
            f"{'stage' if what.startswith('view') else 'element'}{'s' if count != 1 else ''}"
            + (f" (when {loops}{where.replace(' with ', ', ')})" if loops else
               (f" ({where.strip()})" if where else "")),
            [(decl, f"`{name_of(decl)}` is declared here")],
            help=(f"keep the stage in [0, {count}), e.g. `k % {count}`" if count > 1 else
                  "it has a single element: use stage=0 (the default)")))
        return False

    def stage_of(self, ins: Instr, opnd: tuple | None) -> tuple[View, int] | None:
        """(view, stage) an operand reads in this iteration; None when out of range."""
        if opnd is None:
            return None
        view, idx, _ = opnd
        if self.staged is idx:
            s = self.stage
        else:
            s = self.value(idx, ins)
            self.staged, self.stage = idx, s
        if 0 <= s < view.stages:  # checked here: the message is only built for a finding
            return view, s
        self.index(ins, s, view.stages, f"view `{view.name}`", view.op)
        return None

    def step(self) -> tuple[str, int] | None:
        """The innermost loop's variable and value, for messages ("k = 3")."""
        return self.loops[-1] if self.loops else None

    def run(self, steps: list[Step]) -> None:
        for f in steps:
            f(self)

    def never_ends(self, ins: Instr, step: int) -> None:
        where = self.where
        self.oob.append(Finding(
            "CAKE-S019", ins.op,
            f"the loop at line {line_of(ins.op)} steps by {step}"
            + (f" ({where.strip()})" if where else "") + ": it never ends",
            help="the step must be at least 1 for every launch, e.g. `lm.max(step, 1)`"))

    def loop(self, ins: Instr, body: list[Step], name: str,
             bounds: tuple[int | None, int | None, int | None]) -> None:
        lb, ub, step = bounds
        if lb is None:
            lb = self.value(ins.lb, ins)
        if ub is None:
            ub = self.value(ins.ub, ins)
        if step is None:
            step = self.value(ins.step, ins)
        if step <= 0:
            if lb < ub:
                self.never_ends(ins, step)
            return
        n = trip_count(lb, ub, step)
        iv = ins.iv
        p = self.k.period
        top = self.top if self.top is not None and ins is self.top.loop else None
        begin = self.budget[0]
        if _in_full(n, self.exact, p):
            first = self._resume(top, *top.resume) if top is not None and top.resume else 0
            iterations: Iterator[int] = iter(range(first, n))
            short = 0
        else:
            # The first period, then a tail with the same residue modulo the period: ring
            # positions and phase parities end where the full loop leaves them.
            skip = (n - 2 * p) // p * p
            iterations = chain(range(p), range(p + skip, n))
            short = 1
        self.inside_short += short
        key = id(iv)
        self.loops.append((name, lb))
        outer, values, its = self.it, self.values, self.iterations
        loops, env = self.loops, self.env
        marks = top.marks if top is not None else None
        for j in iterations:
            if marks is not None:
                marks.append((len(self.events), self.seg, len(its), begin - self.budget[0]))
            v = lb + j * step
            loops[-1] = (name, v)
            self.values = now = (*values, v)
            self.it = its.setdefault(now, len(its))
            env[key] = v
            self.staged = None
            self.seg += 1
            for f in body:
                f(self)
        self.loops.pop()
        self.it, self.values = outer, values
        self.inside_short -= short
        self.env.pop(key, None)
        self.staged = None
        self.seg += 1

    def _resume(self, top: TopLoop, events: list[tuple], marks: list[Mark], j: int) -> int:
        """Enters the top-level loop `top` at iteration j of an earlier trace: its events,
        marks and state before that iteration, charging the budget their ticks. Returns the
        first iteration to run: j, or 0 where the budget would run out before j (the
        iterations then run, and stop where they would)."""
        n_events, seg, numbered, ticks = marks[j]
        if self.budget[0] < ticks:
            return 0
        self.budget[0] -= ticks
        self.events.extend(events[marks[0][0]:n_events])
        top.marks = marks[:j]
        self.seg = seg
        # The skipped iterations are numbered by placeholders: their loop values never recur
        # (each begins with its own value of this loop's variable).
        its = self.iterations
        its.update((-i, 0) for i in range(len(its), numbered))
        return j


# ---- exploration -------------------------------------------------------------------------------


@dataclass
class Run:
    """The role traces of one launch (None for a role that could not run)."""

    env: Env
    traces: list[list[tuple] | None]
    oob: list[Finding]
    describe: Callable[[], str]  # the launch, as findings name it (`where`)
    fresh: bool = True  # False when every trace repeats an earlier run's (same verdict)

    @property
    def complete(self) -> bool:
        return all(t is not None for t in self.traces)

    @property
    def where(self) -> str:
        return self.describe()


@dataclass
class Exploration:
    runs: list[Run]
    partial: str  # why some launch could not be explored ("" when all were)
    launches: Launches | None = None
    #: results computed from the runs, shared by the passes that need them (accounting.py)
    memo: dict = field(default_factory=dict)


def explore(k: Kernel) -> Exploration:
    """Traces every role under every launch, within the event budgets. A role whose
    runtime values repeat an earlier launch's reuses that trace; a trace equal to an earlier
    one (other values, same events: block 1 of a grid of 2 runs what block 0 runs) is that
    trace, so a run whose every trace repeats an earlier run's is not fresh (simulate.py
    skips it: the same traces give the same verdict). A role with a coarser key
    (tracekey.py) reuses a trace without findings under it, charging the budget the ticks
    the trace cost (a run out of budget is traced, and stops as it did), and under the same
    key but a shorter trip count resumes from it before its last iteration (`TopLoop`)."""
    launches = launches_of(k)
    sigs, shifts = signatures(k), shift_keys(k)
    memo: dict[tuple, tuple[list[tuple] | None, list[Finding]]] = {}
    shifted: dict[tuple, tuple[list[tuple], int]] = {}  # trace, ticks under a shift key
    longest: dict[tuple, Longest] = {}  # per shift key but the trip count
    interned: dict[tuple, list[tuple]] = {}
    runs: list[Run] = []
    seen: set[tuple[int, ...]] = set()
    partial = ""
    width = max(k.n_elems, CLOCK_ELEMENTS)
    per_run, total = (EVENT_BUDGET * CLOCK_ELEMENTS // width,
                      TOTAL_BUDGET * CLOCK_ELEMENTS // width)
    for env in launches.envs():
        # The description is built when a finding names the launch, once.
        where = _described(launches, env)
        oob: list[Finding] = []
        budget = [min(per_run, total)]
        traces = []
        for r in range(len(k.roles)):
            # Runtime values cache themselves in the launch's environment (exprs.py): the
            # signatures compute them once for every role's trace.
            key = (r, *[b.fn(env) for b in sigs[r]])
            if key not in memo:
                shift = shifts[r].key(env) if shifts[r] is not None else None
                hit = shifted.get((r, *shift)) if shift is not None else None
                if hit is not None and budget[0] >= hit[1]:
                    budget[0] -= hit[1]
                    memo[key] = (hit[0], [])
                else:
                    own: list[Finding] = []
                    before = budget[0]
                    top = _top_loop(k, shifts[r], r, shift, longest)
                    tr = trace_role(k, r, env, budget, own, where=where, top=top)
                    if tr is not None:
                        tr = interned.setdefault((r, *tr), tr)
                        if shift is not None and not own:
                            shifted.setdefault((r, *shift), (tr, before - budget[0]))
                            _keep_longest(k, r, shift, top, tr, longest)
                    memo[key] = (tr, own)
            tr, found = memo[key]
            traces.append(tr)
            oob.extend(found)
        total -= min(per_run, total) - max(budget[0], 0)
        ids = tuple(map(id, traces))
        runs.append(Run(env, traces, oob, where, ids not in seen))
        seen.add(ids)
        if oob or None not in traces:
            continue
        if budget[0] < 0 or total <= 0:
            # The other launches are as large: stop rather than stall.
            return Exploration(runs, f"running it{where()} takes more than "
                                     f"{per_run} events", launches)
        bad = k.undecidable[-1]
        partial = partial or (f"the operands of the op at line {line_of(bad.op)} cannot be "
                              f"evaluated{where()}")
    return Exploration(runs, partial, launches)


#: The longest trace under a shift key but the trip count: (trip count, events, marks).
Longest = tuple[int, list[tuple], list[Mark]]


def _top_loop(k: Kernel, shift: Shift | None, r: int, key: tuple | None,
              longest: dict[tuple, Longest]) -> TopLoop | None:
    """The top-level loop of role r for its trace under shift key `key`: resumed from the
    longest earlier trace under the same key but the trip count, where both run every
    iteration, before the last iteration of the shorter one (which may differ: it tests
    whether another follows)."""
    if shift is None or key is None or key[0] is None:
        return None
    top = TopLoop(shift.loop)
    n, got = key[0], longest.get((r, *key[1:]))
    if got is not None and min(n, got[0]) >= 2 and _in_full(n, _exact(k, 0), k.period):
        top.resume = (got[1], got[2], min(n, got[0]) - 1)
    return top


def _keep_longest(k: Kernel, r: int, key: tuple, top: TopLoop | None, trace: list[tuple],
                  longest: dict[tuple, Longest]) -> None:
    """Keeps a complete trace without findings that ran every iteration of its top-level
    loop, marked, as the one to resume from when it is the longest under its key."""
    n = key[0]
    if top is None or len(top.marks) != n or not _in_full(n, _exact(k, 0), k.period):
        return
    got = longest.get((r, *key[1:]))
    if got is None or n > got[0]:
        longest[(r, *key[1:])] = (n, trace, top.marks)


def _described(launches: Launches, env: Env) -> Callable[[], str]:
    """`launches.describe(env)`, computed on the first call."""
    text: list[str] = []

    def where() -> str:
        if not text:
            text.append(launches.describe(env))
        return text[0]
    return where


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
        ex = Exploration([], k.unmodelled) if k.too_large else explore(k)
        cache[kernel] = (k, ex)
    return cache[kernel]


def release_model(ctx: object, kernel: cake.KernelOp) -> None:
    """Drops the model and exploration of `kernel` from the compilation (verify-safety, their
    last reader, is done with them). A compilation outlives its verify (emit, the server):
    kept, their ~4,000 objects per GEMM verify (traces, runs, compiled expressions) would
    be walked by the garbage collector's young collection at the end of the call and again
    in every older generation they were promoted to; released, most are freed at once by
    their reference counts. A later pass that asks builds them again."""
    cache = getattr(ctx, "cake_protocol", None)
    if cache:
        cache.pop(kernel, None)
