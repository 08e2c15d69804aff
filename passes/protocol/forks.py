"""Which simulations of one exploration share a beginning (simulate.py forks them).

The simulation runs the roles round-robin, each until it blocks, so two runs whose role
traces begin with the same events process them in the same order, to the same state, until
a role reaches the end of what its two traces share: up to there one simulation stands for
both. Where the launches differ only in how many tiles a persistent loop runs (the blocks of
grids of 1, 2 and 8 on the same K, say), the shorter traces are mostly beginnings of the
longer ones (trace.py resumes them), and the runs share most of their simulation.

A later run is planned as a `Fork` of an earlier one when the roles' traces wait on the same
barrier elements (which roles consume an element is part of the machine's state: lapping
checks ask), every role shares at least `MIN_SHARED` first events, and no other earlier run
shares more with it (runs are simulated smallest first: a one-tile run shares only its
beginning with the 17-tile run that the 9-tile run shares nearly all of). A run whose
source cannot fork it (a finding came first, or the source itself began past the point
where they part) is simulated from the start.
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
        #: per run (by position in `runs`): the later runs to fork from its simulation, each
        #: with what it shares per role (computed on the first plan: `_sources`)
        self.planned: list[list[tuple[int, list[int]]]] | None = None

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

    def _groups(self) -> list[list[int]]:
        """The runs' positions, grouped by head: each head is compared with one run of each
        group so far (in C; events hash through their views, which do not), not with every
        other run."""
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
        return members

    def _sources(self) -> None:
        """Gives each run one source: the earlier run of its group whose traces share the
        most first events with its own (the first such run on a tie), at least `MIN_SHARED`
        per role. A copy of a simulation costs about as much as simulating 10 to 20 events
        (k-means: 29 copies for 15 forked runs when every earlier run that shares enough
        was forked and the longest share replaced the others); the run's verdict is the
        same from any source (forking continues an identical state)."""
        self.planned = [[] for _ in self.runs]
        for members in self._groups():
            for j, m in enumerate(members):
                best: tuple[int, int, list[int]] | None = None  # (shared, source, at)
                for n in members[:j]:
                    at = []
                    for a, b in zip(self.runs[n][1], self.runs[m][1]):
                        k = shared(a, b)
                        if k < MIN_SHARED:
                            break
                        at.append(k)
                    else:
                        if best is None or sum(at) > best[0]:
                            best = (sum(at), n, at)
                if best is not None:
                    self.planned[best[1]].append((m, best[2]))

    def forks(self, n: int) -> list[Fork]:
        """The runs after the n-th whose source (`_sources`) is its simulation."""
        if self.planned is None:
            self._sources()
        out = []
        for m, at in self.planned[n]:  # type: ignore[index]
            i, other, where = self.runs[m]
            out.append(Fork(i, other, where, at))
        return out
