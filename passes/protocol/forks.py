"""Which simulations of one exploration share a beginning (simulate.py forks them).

The simulation runs the roles round-robin, each until it blocks, so two runs whose role
traces begin with the same events process them in the same order, to the same state, until
a role reaches the end of what its two traces share: up to there one simulation stands for
both. Where the launches differ only in how many tiles a persistent loop runs (the blocks of
grids of 1, 2 and 8 on the same K, say), the shorter traces are mostly beginnings of the
longer ones (trace.py resumes them), and the runs share most of their simulation.

A later run is planned as a `Fork` of an earlier one when the roles' traces wait on the same
barrier elements (which roles consume an element is part of the machine's state: lapping
checks ask), every role shares at least `MIN_SHARED` first events, and they share more than
with any earlier run it was forked from (runs are simulated smallest first: a one-tile run
shares only its beginning with the 17-tile run that the 9-tile run shares nearly all of).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from cakec.passes.protocol.model import WAIT


class Resumable(Protocol):
    """What a fork keeps of the simulation continuing it (simulate.py's `Simulation`, which
    imports this module: naming it here would be an import cycle)."""

    def resume(self, r: int, i: int, progress: bool) -> None: ...

#: Fewer shared events per role than this are simulated again rather than copied.
MIN_SHARED = 16


@dataclass
class Fork:
    """A later run that shares the beginning of a simulation: per role, how many first
    events the two traces share (`at`); once forked, the simulation that continues the
    later run (`sim`) and where its round-robin resumes (`start`: role, event, progress)."""

    run: int  # index of the later run in the exploration
    traces: list[list[tuple]]
    where: Callable[[], str]
    at: list[int]
    sim: Resumable | None = None  # continues the later run, once forked
    start: tuple[int, int, bool] = (0, 0, False)


def shared(a: list[tuple], b: list[tuple]) -> int:
    """How many first events two traces share. Resumed traces hold the very event tuples
    of their source, so the list comparisons mostly see identical objects (C speed)."""
    if a is b:
        return len(a)
    m = min(len(a), len(b))
    if a[:m] == b[:m]:
        return m
    lo, hi = 0, m  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def waited_elements(trace: list[tuple]) -> frozenset[int]:
    """The barrier elements a role trace waits on."""
    return frozenset(ev[2] for ev in trace if ev[0] == WAIT)


#: A run for the planner: its index in the exploration, role traces and launch.
PlannedRun = tuple[int, list[list[tuple]], Callable[[], str]]


class Planner:
    """Plans the forks of each simulation among the runs after it."""

    def __init__(self, runs: list[PlannedRun]) -> None:
        #: the runs in simulation order
        self.runs = runs
        #: per role trace (by identity: explore() interns equal traces, which the planner's
        #: caller holds): `waited_elements`
        self.waits: dict[int, frozenset[int]] = {}
        #: per run (by position in `runs`): the positions of the runs with its `_head`, in
        #: order (computed on the first plan: only runs of one group can be forked)
        self.groups: list[list[int]] = []

    def waited(self, traces: list[list[tuple]]) -> list[frozenset[int]]:
        """Per role trace, the barrier elements it waits on (each trace scanned once: they
        are part of `_head`, and a simulation's consumers of each element)."""
        out = []
        for tr in traces:
            got = self.waits.get(id(tr))
            if got is None:
                got = self.waits[id(tr)] = waited_elements(tr)
            out.append(got)
        return out

    def _head(self, traces: list[list[tuple]]) -> tuple:
        """What two runs must agree on to be forked: per role, the barrier elements its
        trace waits on and its first `MIN_SHARED` events."""
        return (tuple(self.waited(traces)), tuple(tuple(tr[:MIN_SHARED]) for tr in traces))

    def _group(self) -> None:
        """Sorts the runs by head: each head is compared with one run of each group so far
        (in C; events hash through their views, which do not), not with every other run."""
        heads: list[tuple] = []
        members: list[list[int]] = []
        for n, (_, traces, _) in enumerate(self.runs):
            head = self._head(traces)
            g = next((g for g, h in enumerate(heads) if h == head), None)
            if g is None:
                heads.append(head)
                members.append([])
                g = len(heads) - 1
            members[g].append(n)
            self.groups.append(members[g])

    def forks(self, n: int, forked: dict[int, Fork]) -> list[Fork]:
        """The runs after the n-th that share enough of its beginning to be forked from its
        simulation, and more than with the run they were forked from (`forked`, by index in
        the exploration)."""
        if not self.groups:
            self._group()
        traces = self.runs[n][1]
        out = []
        for m in self.groups[n]:
            if m <= n:
                continue
            i, other, where = self.runs[m]
            at = []
            for a, b in zip(traces, other):
                k = shared(a, b)
                if k < MIN_SHARED:
                    break
                at.append(k)
            else:
                if i not in forked or sum(at) > sum(forked[i].at):
                    out.append(Fork(i, other, where, at))
        return out
