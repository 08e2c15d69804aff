"""The first wrong event behind a protocol failure (CAKE-S025, CAKE-S026).

A deadlock, race or lapped phase is where a mistake shows, often a pair of events after the
mistake: a wait copy-pasted with the wrong stage deadlocks on the next pair, a release placed
before the read it is meant to release makes its barrier look full and the other role waits
forever. Once the simulation has failed on a launch, `first_departure` walks that launch's role
traces back to the first event that departs from what the barriers' roles imply, and the gate
reports that event with the failure as a note:

* the stage a ring event names must be the stage of the data it orders (a ring barrier of as
  many elements as its views have stages, element i for stage i, as every TMA load pairs
  them): the view stages a role touches after a wait on `B[e]` (up to its next wait), and the
  ones it touched before a release of `B[e]` (since its previous release of `B`), are stage e.
  Of a wait and the accesses it orders, the one at fault is the one the peer role disagrees
  with: the peer's step of the same trip (the n-th completion of `B` for the n-th wait, the
  n-th wait on the loads' barrier for the loads after a wait) names the other's stage.
  Accesses that disagree among themselves are at fault where they leave the wait's stage.
* a release of `B` (`lm.arrive`, `lm.commit`) must follow the role's reads of what `B`'s
  waiters overwrite once they pass it (their writes after the wait, up to their next wait on
  `B`): a read after the release, before the role waits again, is read after it was released.

Nothing here finds errors of its own: it only relocates one the simulation found.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation

from cakec.passes.protocol.model import (
    ARRIVE, COMMIT, MMA, READ_ACC, READ_STAGE, TMA, VERB, WAIT, WRITE_STAGE, Barrier, Finding,
    Instr, Kernel, View, line_of, reads_of, walk, writes_of,
)

_COMPLETIONS = (ARRIVE, COMMIT, TMA)
#: where the accounting segment (a wait or a loop iteration starts a new one) of a read is
_SEG = {MMA: 7, READ_STAGE: 4, READ_ACC: 3}


@dataclass(frozen=True)
class _Access:
    """A role's access of a view stage at trace index `at`."""

    at: int
    view: View
    stage: int
    ins: Instr
    writes: bool


def _accesses(ev: tuple, at: int) -> list[_Access]:
    kind, ins = ev[0], ev[1]
    if kind == TMA:
        return [_Access(at, ins.view, ev[4], ins, True)]
    if kind == MMA:
        return [_Access(at, v, s, ins, False) for v, s in (x for x in ev[2:4] if x is not None)]
    if kind in (READ_STAGE, WRITE_STAGE):
        return [_Access(at, ev[2][0], ev[2][1], ins, kind == WRITE_STAGE)]
    return []


class _Traces:
    """Per role: its waits and completion groups on each barrier, in trace order."""

    def __init__(self, k: Kernel, traces: list[list[tuple]]):
        self.k, self.traces = k, traces
        self.waits: list[dict[int, list[int]]] = []  # barrier base -> trace indices
        self.groups: list[dict[int, list[int]]] = []  # first trace index of each group
        for tr in traces:
            waits: dict[int, list[int]] = {}
            groups: dict[int, list[int]] = {}
            last: dict[int, tuple[int, int]] = {}
            for i, ev in enumerate(tr):
                if ev[0] == WAIT:
                    waits.setdefault(ev[1].barrier.base, []).append(i)
                elif ev[0] in _COMPLETIONS:
                    b = ev[1].barrier.base
                    if last.get(b) != (ev[2], ev[3]):  # one phase's worth: same element, segment
                        groups.setdefault(b, []).append(i)
                        last[b] = (ev[2], ev[3])
            self.waits.append(waits)
            self.groups.append(groups)

    def peers(self, r: int, b: Barrier, table: list[dict[int, list[int]]]) -> list[int]:
        return [q for q in range(len(self.traces)) if q != r and table[q].get(b.base)]


def first_departure(k: Kernel, fwf: list[bool], traces: list[list[tuple]],
                    consequence: Finding) -> Finding | None:
    """The first event of any role that departs from the protocol, reported with
    `consequence` (what the simulation found) as a note; None when every event agrees."""
    t = _Traces(k, traces)
    assoc = _associated_views(k, traces)
    found: list[tuple[int, int, Finding]] = []
    for r, tr in enumerate(traces):
        f = _in_role(k, t, fwf, assoc, r, tr)
        if f is not None:
            found.append((f[0], r, f[1]))
    if not found:
        return None
    f = min(found, key=lambda x: (x[0], x[1]))[2]
    f.notes.append((consequence.op, f"this causes: {consequence.message} "
                                    f"[{consequence.code}]"))
    return f


def _associated_views(k: Kernel, traces: list[list[tuple]]) -> dict[int, set[View]]:
    """Per ring barrier: the views whose stages its elements stand for: the views TMA loads
    complete it for, and those a role writes first after waiting on it."""
    out: dict[int, set[View]] = {}
    for tr in traces:
        for i, ev in enumerate(tr):
            if ev[0] == TMA:
                out.setdefault(ev[1].barrier.base, set()).add(ev[1].view)
            elif ev[0] == WAIT:
                first = _first_accesses(tr, i, None)
                if first and first[0].writes:
                    out.setdefault(ev[1].barrier.base, set()).update(a.view for a in first)
    return {b.base: {v for v in out.get(b.base, ()) if v.stages == b.count}
            for b in k.barriers if b.count > 1}


def _first_accesses(tr: list[tuple], i: int, views: set[View] | None) -> list[_Access]:
    """The accesses (of `views`, or of any view) of the first instruction after the wait at
    `i` that makes any, before the role's next wait; with the TMA loads right after it in the
    same iteration (a stage's loads are one step)."""
    out: list[_Access] = []
    for j in range(i + 1, len(tr)):
        ev = tr[j]
        if ev[0] == WAIT:
            break
        got = [a for a in _accesses(ev, j) if views is None or a.view in views]
        if out:
            if not got or ev[0] != TMA or tr[out[0].at][0] != TMA \
                    or ev[3] != tr[out[0].at][3]:
                break
        out.extend(got)
    return out


def _in_role(k: Kernel, t: _Traces, fwf: list[bool], assoc: dict[int, set[View]], r: int,
             tr: list[tuple]) -> tuple[int, Finding] | None:
    # per barrier element: the stages of its barrier's views accessed since its last release
    since: dict[int, list[_Access]] = {}
    for i, ev in enumerate(tr):
        kind = ev[0]
        if kind == WAIT:
            f = _after_wait(k, t, fwf, assoc, r, tr, i)
            if f is not None:
                return i, f
        elif kind in (ARRIVE, COMMIT):
            f = (_stage_of_release(k, t, fwf, r, i, since.get(ev[2], []))
                 or _release_before_read(k, t, r, tr, i))
            if f is not None:
                return i, f
            since[ev[2]] = []
        for a in _accesses(ev, i):
            for b in k.barriers:
                if a.view in assoc.get(b.base, ()):
                    for e in range(b.base, b.base + b.count):
                        since.setdefault(e, []).append(a)
    return None


def _after_wait(k: Kernel, t: _Traces, fwf: list[bool], assoc: dict[int, set[View]], r: int,
                tr: list[tuple], i: int) -> Finding | None:
    """A wait on `b[e]` and the first accesses of `b`'s views after it."""
    ins: Instr = tr[i][1]
    b, e = ins.barrier, tr[i][4]
    views = assoc.get(b.base)
    if not views:
        return None
    acc = _first_accesses(tr, i, views)
    wrong = [a for a in acc if a.stage != e]
    if not wrong:
        return None
    roles = k.roles
    who = roles[r].name
    s = wrong[0].stage
    n = t.waits[r][b.base].index(i)
    peer = _peer_says(k, t, fwf, r, b, n, waits=True)
    loads = [a for a in wrong if a.ins.kind == TMA]
    # The accesses are at fault when they disagree among themselves or the peer's step agrees
    # with the wait; loads after a wait the peer says nothing about (an empty barrier's free
    # first lap) are judged by their own barrier: the stage this trip's consumer waits for.
    agree = len(wrong) < len(acc) or (peer is not None and peer[0] == e)
    if loads and peer is None:
        f = loads[0].ins.barrier
        q_n = t.groups[r][f.base].index(
            max(g for g in t.groups[r][f.base] if g <= loads[0].at))
        fed = _peer_says(k, t, fwf, r, f, q_n, waits=False)
        if fed is not None and fed[0] == e:
            agree = True
            peer = (e, fed[1], fed[2])
            peer_note = f"role {roles[fed[1]].name}'s matching wait is on {f.elem(e)}"
    elif peer is not None:
        peer_note = f"role {roles[peer[1]].name}'s matching step completes {b.elem(peer[0])} here"
    wait_note = (ins.op, f"role {who} waits on {b.elem(e)} here")
    if agree:
        off = loads or [wrong[0]]
        a = off[0]
        notes = [wait_note] + ([(peer[2].op, peer_note)] if peer is not None else [])
        if loads:
            return _finding(
                a.ins.op,
                f"role {who} fills {_names(loads)} at {_lines(loads)} after waiting on "
                f"{b.elem(e)} (line {line_of(ins.op)}) for stage {e}: the load is into another "
                "stage than the one it waited to be free", notes,
                f"load into the stage the wait is for (stage {e})")
        return _finding(
            a.ins.op,
            f"role {who} {_verb(a)} {a.view.name}[{a.stage}] at line {line_of(a.ins.op)} after "
            f"waiting on {b.elem(e)} (line {line_of(ins.op)}), which orders stage {e}", notes,
            f"use the stage of the wait for every access it orders: {a.view.name}[...] with "
            "the index of the wait")
    verb = "fills" if wrong[0].writes else "reads"
    notes: list[tuple[Operation | None, str]] = [
        (wrong[0].ins.op, f"role {who} {verb} {_names(wrong)} here")]
    if peer is not None:
        notes.append((peer[2].op, peer_note))
    return _finding(
        ins.op,
        f"role {who} waits on {b.elem(e)} at line {line_of(ins.op)} but then {verb} "
        f"{_names(wrong)} ({_lines(wrong)}): the wait is for stage {e}, the data it orders is "
        f"in stage {s}",
        notes,
        f"wait on the stage of the data: `lm.wait({b.name}, stage=...)` with the index of "
        f"`{wrong[0].view.name}[...]`")


def _stage_of_release(k: Kernel, t: _Traces, fwf: list[bool], r: int, i: int,
                      since: list[_Access]) -> Finding | None:
    """A release of `b[e]` by a role that, since its previous release of `b[e]`, accessed
    stages of `b`'s views but never stage e."""
    ev = t.traces[r][i]
    ins: Instr = ev[1]
    b, e = ins.barrier, ev[4]
    if b.count <= 1 or not since or any(a.stage == e for a in since):
        return None
    s = since[-1].stage
    used = [a for a in since if a.stage == s and a.ins is since[-1].ins]
    groups = t.groups[r][b.base]
    n = groups.index(max(g for g in groups if g <= i))
    peer = _peer_says(k, t, fwf, r, b, n, waits=False)
    if peer is not None and peer[0] == e:
        return None  # the peer waits for what was released: the accesses are off
    roles = k.roles
    notes: list[tuple[Operation | None, str]] = [
        (used[0].ins.op, f"role {roles[r].name} {_verb(used[0])} {_names(used)} here")]
    if peer is not None:
        notes.append((peer[2].op, f"role {roles[peer[1]].name}'s matching wait is on "
                                  f"{b.elem(s)}"))
    return _finding(
        ins.op,
        f"role {roles[r].name} releases {b.elem(e)} with {VERB[ins.kind]} at line "
        f"{line_of(ins.op)} after its accesses of {_names(used)} ({_lines(used)}): it "
        f"releases stage {e}, the data it used is in stage {s}",
        notes,
        f"release the stage the role used: `{VERB[ins.kind].strip('`').split('(')[0]}"
        f"({b.name}, stage=...)` with the index of `{used[0].view.name}[...]`")


def _peer_says(k: Kernel, t: _Traces, fwf: list[bool], r: int, b: Barrier, n: int,
               waits: bool) -> tuple[int, int, Instr] | None:
    """The stage the peer role's step matching role r's n-th wait on `b` (`waits`) or n-th
    completion group of `b` names: (stage, peer role, its instruction); None without a peer
    step. A first-wait-free barrier's first `count` waits pass before any completion."""
    shift = b.count if fwf[k.barriers.index(b)] else 0
    table = t.groups if waits else t.waits
    for q in t.peers(r, b, table):
        j = n - shift if waits else n + shift
        seq = table[q][b.base]
        if 0 <= j < len(seq):
            ev = t.traces[q][seq[j]]
            return ev[4], q, ev[1]
    return None


def _release_before_read(k: Kernel, t: _Traces, r: int, tr: list[tuple], i: int
                         ) -> Finding | None:
    """A release of `b` followed, in the same iteration and before the role's next wait, by
    a read of what `b`'s waiters overwrite once they pass their wait on it."""
    ins: Instr = tr[i][1]
    b = ins.barrier
    if _carries_data(k, b):
        return None  # it announces data (a full barrier): what follows it is not released
    seg = tr[i][3]
    for j in range(i + 1, len(tr)):
        ev = tr[j]
        if ev[0] == WAIT:
            return None
        reads = _reads(ev)
        if reads and ev[_SEG[ev[0]]] != seg:  # the next iteration reads new contents
            return None
        for thing, line in reads:
            writer = _overwriter(t, r, b, tr[i][2], thing)
            if writer is None:
                continue
            q, wait, write = writer
            roles = k.roles
            what = f"`{thing.name}`" if not isinstance(thing, tuple) else \
                f"{thing[0].name}[{thing[1]}]"
            return _finding(
                ins.op,
                f"{VERB[ins.kind]} at line {line_of(ins.op)} releases {b.elem(tr[i][4])} before "
                f"role {roles[r].name} reads {what} (line {line}), which role {roles[q].name} "
                f"overwrites once it passes its wait on `{b.name}`",
                [(ev[1].op, f"role {roles[r].name} reads {what} here"),
                 (wait.op, f"role {roles[q].name} waits on `{b.name}` here"),
                 (write.op, f"and then writes {what} here")],
                f"move the {VERB[ins.kind]} after the read of {what}", "CAKE-S026")
    return None


def _carries_data(k: Kernel, b: Barrier) -> bool:
    """Whether a producer of `b` writes something one of its consumers reads: then `b`
    announces that data rather than handing buffers back."""
    written = {x for r in b.prod for ins in walk(k.programs[r]) for x in writes_of(ins)}
    return any(written & reads_of(ins) for r in b.cons for ins in walk(k.programs[r]))


def _reads(ev: tuple) -> list[tuple[object, int]]:
    if ev[0] == READ_ACC and ev[1].acc is not None:
        return [(ev[1].acc, line_of(ev[1].op))]
    return [((a.view, a.stage), line_of(a.ins.op)) for a in _accesses(ev, 0) if not a.writes]


def _overwriter(t: _Traces, r: int, b: Barrier, elem: int, thing: object
                ) -> tuple[int, Instr, Instr] | None:
    """A role other than r that waits on element `elem` of `b` and then, before its next
    wait on `b`, writes `thing` (an accumulator by MMA, or a (view, stage) by TMA or store)."""
    for q in t.peers(r, b, t.waits):
        tr = t.traces[q]
        waits = t.waits[q][b.base]
        for n, w in enumerate(waits):
            if tr[w][2] != elem:
                continue
            end = waits[n + 1] if n + 1 < len(waits) else len(tr)
            for j in range(w + 1, end):
                ev = tr[j]
                if ev[0] == MMA and ev[1].acc is thing:
                    return q, tr[w][1], ev[1]
                if any(a.writes and (a.view, a.stage) == thing for a in _accesses(ev, j)):
                    return q, tr[w][1], ev[1]
    return None


def _finding(op: Operation, message: str, notes: list[tuple[Operation | None, str]],
             help: str, code: str = "CAKE-S025") -> Finding:
    return Finding(code, op, message, notes, help=help)


def _verb(a: _Access) -> str:
    return "fills" if a.writes else "reads"


def _names(accs: list[_Access]) -> str:
    names = list(dict.fromkeys(f"{a.view.name}[{a.stage}]" for a in accs))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _lines(accs: list[_Access]) -> str:
    lines = sorted({line_of(a.ins.op) for a in accs})
    return ("line " if len(lines) == 1 else "lines ") + ", ".join(map(str, lines))
