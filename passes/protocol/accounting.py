"""Structural checks of the barrier protocol and the arrival accounting.

* `first_wait_free(k)` classifies barriers: "empty" ones, whose consumers' first wait passes,
  and "full" ones.
* `role_findings(k)` checks who may complete and wait on each barrier (S005/S006) and that
  register tiles stay in their role (S017).
* `accounting(k, runs, target)` checks the role events per phase of every barrier against its
  `init_count` (S007) and derives the hardware arrivals and transaction bytes per phase that
  `derive-barriers` writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from cakec.dialects import cake
from cakec.passes.protocol.model import (
    ARRIVE, COMMIT, MMA, READ_ACC, SKIP, TMA, VERB, WAIT, WRITE_STAGE, Barrier, Finding, Instr,
    Kernel, line_of, reads_of, walk, writes_of,
)
from cakec.passes.protocol.trace import Exploration, Run
from cakec.targets.cluster import fanout


#: Event kinds that complete a barrier phase (count towards its `init_count`).
_COMPLETIONS = frozenset((ARRIVE, COMMIT, TMA))


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
            for ins in walk(prog):
                if ins.barrier is b:
                    waited |= ins.kind == WAIT
                    fills |= ins.kind == TMA
                    if ins.kind in (ARRIVE, COMMIT):
                        released |= reads
                if waited:
                    guarded |= writes_of(ins)
                    if (ins.kind == TMA and ins.barrier is not b and r in b.cons
                            and set(ins.barrier.cons) & set(b.prod)):
                        feeds_producer = True
                reads |= reads_of(ins)
        out.append(not fills and (bool(guarded & released) or feeds_producer))
    return out


def turn_takers(k: Kernel, b: Barrier) -> set[int]:
    """The producer roles of `b` that take turns on its phases: consumers that pass over
    (`lm.skip`) ring positions of a barrier of b's pipeline take turns on that ring (each
    position is one consumer's), so they also hand its stages back by turns."""
    pipe = b.op.pipeline
    if pipe is None:
        return set()
    return {r for r in b.prod if any(
        ins.kind == SKIP and ins.barrier.op.pipeline is pipe for ins in walk(k.programs[r]))}


def role_findings(k: Kernel) -> list[Finding]:
    """Barrier role mismatches (S005/S006) and register tiles used outside their role (S018)."""
    out: list[Finding] = []
    for b in k.barriers:
        out.extend(_mismatches(k, b))
    seen: set[tuple[int, int]] = set()
    for r, prog in enumerate(k.programs):
        for ins in walk(prog):
            acc = ins.acc if ins.kind in (MMA, READ_ACC, WRITE_STAGE) else None
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
        for ins in walk(prog):
            if ins.barrier is not b:
                continue
            target = waits if ins.kind in (WAIT, SKIP) else completes
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
            f"role {who} completes barrier `{b.name}` ({VERB[ins.kind]}) but is not one of its "
            f"producers {names(b.prod)}", [decl],
            help=f"add {who} to prod=[...] of `{b.name}`, or complete the barrier that role "
                 f"{who} produces"))
    for r, ins in sorted(bad_w.items()):
        who = k.roles[r].name
        out.append(Finding(
            "CAKE-S006", ins.op,
            f"role {who} {'skips phases of' if ins.kind == SKIP else 'waits on'} barrier "
            f"`{b.name}` but is not one of its consumers {names(b.cons)}", [decl],
            help=f"add {who} to cons=[...] of `{b.name}`, or wait on the barrier that role "
                 f"{who} consumes"))
    return out


@dataclass
class Accounting:
    """Per barrier: hardware arrivals and transaction bytes per phase, and the findings."""

    arrivals: list[int]
    tx_bytes: list[int]
    findings: list[Finding]


def accounting_of(k: Kernel, ex: Exploration, target: str) -> Accounting:
    """`accounting` of every explored run, computed once per exploration and target:
    derive-barriers writes its arrivals and bytes, verify-safety reports its findings."""
    key = ("accounting", target)
    if key not in ex.memo:
        ex.memo[key] = accounting(k, ex.runs, target)
    return ex.memo[key]


def accounting(k: Kernel, runs: list[Run], target: str) -> Accounting:
    """Groups each role's completions of one barrier element that no wait or loop iteration
    separates (one phase's worth), over every explored trip count, and checks them against
    `init_count`."""
    # Runs share equal traces (explore interns them): each (role, trace) is grouped once and
    # weighed by how many runs hold it, in order of first appearance: group sizes are
    # counted with those weights (`Sizes`), so the answer is that of every run's groups in
    # turn.
    weight: dict[tuple[int, int], list] = {}
    for run in runs:
        for r, tr in enumerate(run.traces):
            if tr:
                w = weight.get((r, id(tr)))
                if w is None:
                    weight[(r, id(tr))] = [tr, 1]
                else:
                    w[1] += 1
    per_barrier: dict[int, dict[int, Sizes]] = {}
    bases = [b.base for b, _ in k.elem_barrier]
    for (r, _), (tr, n) in weight.items():
        groups: dict[tuple[int, int], list[Instr]] = {}
        for ev in tr:  # every event of every distinct trace: no call, no list per event
            if ev[0] in _COMPLETIONS:
                key = (ev[2], ev[3])
                g = groups.get(key)
                if g is None:
                    groups[key] = [ev[1]]
                else:
                    g.append(ev[1])
        # A trace has a group per phase of each element: its sizes are looked up per element,
        # and each group only counted (a GEMM verify has ~1,000 groups).
        counts: dict[int, Sizes] = {}
        for (e, _), g in groups.items():
            c = counts.get(e)
            if c is None:
                c = counts[e] = per_barrier.setdefault(bases[e], {}).setdefault(r, ({}, {}))
            weights, first = c
            m = len(g)
            w = weights.get(m)
            if w is None:
                weights[m], first[m] = n, g
            else:
                weights[m] = w + n
    acct = Accounting([], [], [])
    for b in k.barriers:
        roles = per_barrier.get(b.base, {})
        typical = {r: _typical(sizes) for r, sizes in roles.items()}
        if len(typical) > 1 and set(typical) <= turn_takers(k, b):
            # Producers taking turns complete whole phases each: count one role's events
            # (the one that disagrees with init_count, if any, for the finding).
            r0 = next((r for r, g in sorted(typical.items()) if len(g) != b.init_count),
                      min(typical))
            typical, roles = {r0: typical[r0]}, {r0: roles[r0]}
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
    arrive by a role whose every warp runs (each warp arrives once its lanes are done), an
    arrive or commit with `multicast=` (each block of the group arrives on every member's
    barrier), and a copy_load, where every thread of the role arrives once its own cp.async
    copies land."""
    def per_event(r: int, i: Instr) -> int:
        role = k.roles[r]
        if isinstance(i.op, cake.CopyLoadOp):
            return 32 * len(role.warps)
        if i.kind == ARRIVE:
            # An arrival with multicast= comes from every block of its group alike.
            return (1 if role.single_thread else len(role.warps)) * fanout(k.op, i.op)
        if i.kind != COMMIT:
            return 1  # a multicast copy: each member's own expect_tx is its one arrival
        return (role.warpgroups if target == "sm_90a" else 1) * fanout(k.op, i.op)

    if events:
        hw = sum(per_event(r, i) for r, g in typical.items() for i in g)
        return b.init_count * hw // events
    # No trip count completes it: every completion op of the barrier tells the same.
    kinds = {per_event(r, i) for r, prog in enumerate(k.programs) for i in walk(prog)
             if i.barrier is b and i.kind != WAIT}
    return b.init_count * (max(kinds) if kinds else 1)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


#: Per barrier and role: the sizes of its groups of completions, each weighed by the runs
#: that hold it, and the first group of each size, in order of first appearance.
Sizes = tuple[dict[int, int], dict[int, list[Instr]]]


def _typical(sizes: Sizes) -> list[Instr]:
    """The first group of the most frequent size (`max` keeps the first of equal counts)."""
    weights, first = sizes
    return first[max(weights, key=weights.__getitem__)]


def _account(k: Kernel, b: Barrier, roles: dict[int, Sizes],
             typical: dict[int, list[Instr]], events: int) -> list[Finding]:
    # The per-phase transaction-byte limit is a hardware fact: verify-conformance (H016).
    decl = (b.op, f"`{b.name}` is declared here with init_count={b.init_count}")
    if any(len(weights) > 1 for weights, _ in roles.values()):
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
