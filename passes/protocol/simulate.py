"""The abstract mbarrier machine: all roles run together under one trip-count assignment.

`simulate_all(k, fwf, exploration, tcgen05)` runs all roles of every explored launch against an
abstract mbarrier machine with vector clocks (`Simulation`) and returns the `Finding`s of the
most fundamental category any assignment shows (out-of-range indices, deadlocks, races, phase
lapping, uninitialised reads, unconsumed phases), each in the author's terms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from xdsl.ir import Operation

from cakec.dialects import cake
from cakec.dialects.cake import tile_leaves
from cakec.passes.protocol.model import (
    ACC_WRITE, ARRIVE, COMMIT, MMA, READ_ACC, READ_STAGE, SKIP, TILE_READ, TILE_WRITE, TMA,
    VERB, WAIT, WRITE_STAGE, Acc, Barrier, Finding, Instr, Kernel, View, line_of, walk,
)
from cakec.passes.protocol.departure import first_departure
from cakec.passes.protocol.reuse import as_reuse, stale_read
from cakec.passes.protocol.forks import Fork, Planner, waited_elements
from cakec.passes.protocol.trace import Exploration, Run

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

    def __init__(self, k: Kernel, fwf: list[bool], traces: list[list[tuple]],
                 where: str | Callable[[], str], tcgen05: bool = False, wgmma: bool = False,
                 waited: list[frozenset[int]] | None = None):
        self.k, self.traces, self.launch = k, traces, where
        # An MMA into registers is asynchronous (its operand reads end at a commit or an
        # accumulator read) only as a wgmma; mma.sync has read its operands when it returns.
        self.async_reg_mma = wgmma
        # Roles whose `lm.commit` is a tcgen05.commit (sm_100a: a role issuing MMAs into TMEM).
        self.tc_commit = [tcgen05 and t for t in _tmem_mma_roles(k)]
        R, E = len(k.roles), k.n_elems
        self.R, self.E, self.D = R, E, 2 * R + E
        self.fwf = [int(fwf[k.barriers.index(b)]) for b, _ in k.elem_barrier]
        self.init = [b.init_count for b, _ in k.elem_barrier]
        self.vc = [[0] * self.D for _ in range(R)]
        self.pos = [0] * R
        self.completed = [0] * E
        self.pending = [0] * E
        #: per element: the join of its pending phase's arrivals (set by the first of them)
        self.pend_vc: list[list[int]] = [[] for _ in range(E)]
        self.phase_vc: list[list[list[int]]] = [[] for _ in range(E)]
        self.completer: list[list[tuple[int, Instr, int]]] = [[] for _ in range(E)]
        #: per element and role: the clock of each wait, in order, 0 for a phase it skipped
        self.waits: list[dict[int, list[int]]] = [{} for _ in range(E)]
        #: (role, barrier index) -> its last `lm.skip` of the barrier (turn-taking consumers)
        self.skips: dict[tuple[int, int], Instr] = {}
        #: per element, the roles whose traces wait on it (`waited`: per role, the elements
        #: its trace waits on, when the caller has them: `waited_elements`)
        self.consumers: list[set[int]] = [set() for _ in range(E)]
        for r, elems in enumerate(waited or map(waited_elements, traces)):
            for e in elems:
                self.consumers[e].add(r)
        self.commits = [0] * R
        self.outstanding: list[list[list]] = [[] for _ in range(R)]
        #: per role: its MMAs into register tiles that no accumulator read retired yet
        #: (wgmma.wait_group; a commit may keep the newest group in flight)
        self.inflight: list[list[list]] = [[] for _ in range(R)]
        #: per register tile that a register-A MMA packs: (clock, instruction) of its last
        #: assignment
        self.assigned: dict[int, tuple[int, Instr]] = {}
        #: per role: its `T.tma_store(view[s])` reads still in flight (they end where the
        #: role next writes bytes of their view: the emitter waits for its stores there)
        self.bulk: list[list[list]] = [[] for _ in range(R)]
        #: per role: the views it writes (an arrival on a barrier of theirs drains too)
        self.writes = _written_views(k)
        self.held = _held_commits(k)
        #: whether the kernel stores a register tile into a stage: only then are the writes
        #: of a tile counted (`versions`, read by CAKE-S043's `_stale_copy`)
        self.versioned = _stores_tiles(k)
        self.stage: dict[tuple[int, int, int], list] = {}  # [fills, reads since the last]
        self.acc: dict[int, list] = {}  # [last write, reads since]
        #: per accumulator and running tile: its writes (instruction, innermost loop step)
        #: since it was last read; for a running tile, None until its first write
        self.unread: dict[int, list[tuple[Instr, tuple | None]] | None] = {}
        self.unwritten: list[list] = []
        #: CAKE-S043: per stage buffer, the register tile its last `store` copied
        #: [tile, its version then, store instr]; per tile, [version, the first write since
        #: each version (instr, iteration)]
        self.copies: dict[tuple[int, int, int], list] = {}
        self.versions: dict[int, list] = {}
        #: per role: the fill each `view[s].load()` last read (for CAKE-S021), by the op's
        #: identity (an xDSL op hashes through a Python method; the IR outlives the model)
        self.vec_fill: list[dict[int, list]] = [{} for _ in range(R)]
        self.found: dict[str, dict[tuple[str, int], Finding]] = {c: {} for c in _CATEGORIES}
        #: per instruction reading a stage: `_read_flags` (once per kernel)
        self.read_flags: dict[Instr, tuple[bool, bool, bool, bool]] = k.memo.setdefault(
            "read_flags", {})
        #: later runs that share this one's beginning (forks.py), and per role the first
        #: event at which one of them departs (-1: none)
        self.forks: list[Fork] = []
        self.fork_at = [-1] * R

    @property
    def where(self) -> str:
        """The launch, as findings name it (described when the first finding does)."""
        if not isinstance(self.launch, str):
            self.launch = self.launch()
        return self.launch

    # ---- driver --------------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        self.resume(0, 0, False)
        return self.finish()

    def resume(self, r: int, i: int, progress: bool) -> None:
        """Runs the roles round-robin, each until it blocks or ends, from the turn of role r at
        its event i (the turn began at `pos[r]`) until a sweep of every role moves none;
        `progress`: whether a turn of the current sweep moved its role."""
        if not self.R:  # a kernel without roles has nothing to run
            return
        traces, pos = self.traces, self.pos
        waits, completed, fwf = self.waits, self.completed, self.fwf
        vcs, phase_vc, R = self.vc, self.phase_vc, self.R
        handlers = {TMA: self._on_tma, ARRIVE: self._on_arrive, COMMIT: self._on_commit,
                    MMA: self._mma, SKIP: self._on_skip, READ_STAGE: self._on_read_stage,
                    TILE_WRITE: self._tile_write, TILE_READ: self._on_tile_read,
                    ACC_WRITE: self._acc_write, WRITE_STAGE: self._on_write_stage,
                    READ_ACC: self._on_read_acc}
        while True:
            tr, vc, fork = traces[r], vcs[r], self.fork_at[r]
            n = len(tr)
            while i < n:
                if i == fork:
                    fork = self._fork(r, i, progress)
                ev = tr[i]
                if ev[0] != WAIT:
                    vc[r] += 1
                    handlers[ev[0]](r, ev)
                    i += 1
                    continue
                # A wait (a third of the events), inlined: it runs once the phase it needs
                # (m completed phases) completed; it then knows what that phase's completers
                # knew.
                e = ev[2]
                lst = waits[e].get(r)
                m = (0 if lst is None else len(lst)) + 1 - fwf[e]
                if completed[e] < m:
                    break
                vc[r] += 1
                if lst is None:
                    lst = waits[e][r] = []
                if m >= 2 and vc[R + e] < m - 1:
                    self._stale_parity(r, ev[1], e, m)
                if m >= 1:
                    _join(vc, phase_vc[e][m - 1])
                if completed[e] > m:
                    self._lapped(e, m, r, ev[1])
                lst.append(vc[r])
                i += 1
            if i == fork:  # the role's trace ends where a later run's goes on
                self._fork(r, i, progress)
            if i != pos[r]:
                pos[r] = i
                progress = True
            r += 1
            if r == R:
                if not progress:
                    return
                r, progress = 0, False
            i = pos[r]

    def finish(self) -> list[Finding]:
        """The checks once no role moves: a deadlock, or what is left at exit."""
        if any(pos < len(tr) for pos, tr in zip(self.pos, self.traces)):
            self._deadlock()
        else:
            self._at_exit()
        return self.verdict()[1]

    # ---- forks (forks.py) ----------------------------------------------------------------------

    def plan(self, forks: list[Fork]) -> None:
        """The later runs to fork from this simulation where they depart from it."""
        self.forks = forks
        self.fork_at = [min((f.at[q] for f in forks), default=-1) for q in range(self.R)]

    def _fork(self, r: int, i: int, progress: bool) -> int:
        """Role r is at its event i, where the later runs of `forks` with `at[r] == i` depart
        from this one: each continues from a copy of the state, unless a finding was made
        (it names this run's launch). Returns role r's next departure."""
        if not any(self.found.values()):
            for f in self.forks:
                if f.at[r] == i:
                    f.sim, f.start = self._copy(f.traces, f.where), (r, i, progress)
        self.plan([f for f in self.forks if f.at[r] != i])
        return self.fork_at[r]

    #: the fields no event changes, which a copy shares (the consumers of each element are
    #: the same in both runs: forks.py); every other field is copied
    SHARED = frozenset({"k", "async_reg_mma", "tc_commit", "R", "E", "D", "fwf", "init",
                        "consumers", "writes", "held", "versioned", "read_flags"})

    def _copy(self, traces: list[list[tuple]], where: Callable[[], str]) -> "Simulation":
        """This simulation's state as the beginning of another run's (`traces`, launched as
        `where`): the `SHARED` fields as they are, copies of the others. An access record
        changes only while its role's commit or drain may still end it (it is then in
        `outstanding` or `bulk`, where records enter only as they are made): those are
        copied, once each however many structures hold them; the others, settled, are
        shared by both simulations (copying every record was most of a copy's time)."""
        new = object.__new__(Simulation)
        new.__dict__.update((f, getattr(self, f)) for f in self.SHARED)
        new.traces, new.launch, new.forks, new.fork_at = traces, where, [], [-1] * self.R
        copied = {id(x): x[:] for v in (*self.outstanding, *self.bulk) for x in v}

        def recs(xs: list[list]) -> list[list]:
            return [copied.get(id(x), x) for x in xs] if copied else xs[:]
        new.vc = [v[:] for v in self.vc]
        new.pos, new.commits = self.pos[:], self.commits[:]
        new.completed, new.pending = self.completed[:], self.pending[:]
        # A pending phase's clock is joined into by its next arrivals; a complete one is not.
        new.pend_vc = [v[:] if n else v for v, n in zip(self.pend_vc, self.pending)]
        new.phase_vc = [v[:] for v in self.phase_vc]
        new.completer = [v[:] for v in self.completer]
        new.waits = [{c: v[:] for c, v in w.items()} for w in self.waits]
        new.skips, new.assigned = dict(self.skips), dict(self.assigned)
        new.outstanding = [recs(v) for v in self.outstanding]
        new.inflight = [recs(v) for v in self.inflight]
        new.bulk = [recs(v) for v in self.bulk]
        new.stage = {b: [fills[:], recs(reads)] for b, (fills, reads) in self.stage.items()}
        new.acc = {a: [recs(writes), reads[:]] for a, (writes, reads) in self.acc.items()}
        new.unread = dict(self.unread)
        new.unwritten = recs(self.unwritten)
        new.copies = dict(self.copies)
        new.versions = {t: [v[0], dict(v[1])] for t, v in self.versions.items()}
        new.vec_fill = [dict(v) for v in self.vec_fill]
        new.found = {c: {} for c in _CATEGORIES}
        return new

    def verdict(self) -> tuple[int, list[Finding]]:
        """The most fundamental category found (its rank in _CATEGORIES) and its findings."""
        for rank, c in enumerate(_CATEGORIES):
            if self.found[c]:
                return rank, list(self.found[c].values())
        return len(_CATEGORIES), []

    def _report(self, cat: str, f: Finding, other: Operation | None = None) -> None:
        # One finding per place; refills racing the same read are one mistake, not several.
        if self.k.reuses and cat == "race":
            f = as_reuse(self.k, f, other)
        found = self.found[cat]
        if other is not None:
            if (f.code, id(other)) in found:
                return
            found[(f.code, id(other))] = f
        found.setdefault((f.code, id(f.op)), f)

    # Every event but a wait, by kind (`run` has advanced the role's own clock component):

    def _on_tma(self, r: int, ev: tuple) -> None:
        if self.bulk[r]:
            self._drain(r, ev[1].view)
        self._tma(r, ev)
        self._arrive(r, ev, self.vc[r][:])

    def _on_arrive(self, r: int, ev: tuple) -> None:
        if self.bulk[r]:
            self._drain_for(r, ev[1].barrier)
        self._arrive(r, ev, self.vc[r][:])

    def _on_commit(self, r: int, ev: tuple) -> None:
        if self.bulk[r]:
            self._drain_for(r, ev[1].barrier)
        if not self.tc_commit[r] and ev[1] not in self.held:
            # wgmma.wait_group 0 before the arrival: no MMA of the role reads its registers
            # after it (a register A operand may be packed again)
            self.inflight[r] = []
        self.commits[r] += 1
        for rec in self.outstanding[r]:
            rec[2] = self.commits[r]
        self.outstanding[r] = []
        arr = self.vc[r][:]
        arr[self.R + self.E + r] = self.commits[r]
        if self.tc_commit[r]:
            # The arrival of a tcgen05.commit tracks the role's MMAs; the PTX ISA does not
            # say it makes what the role observed on other barriers (TMA data that landed)
            # visible to the threads that wait on it: they must wait on those themselves.
            arr[self.R:self.R + self.E] = [0] * self.E
        self._arrive(r, ev, arr)

    def _on_skip(self, r: int, ev: tuple) -> None:
        self.waits[ev[2]].setdefault(r, []).append(0)
        self.skips[(r, self.k.barriers.index(ev[1].barrier))] = ev[1]

    def _on_read_stage(self, r: int, ev: tuple) -> None:
        self._read_stage(r, ev[1], *ev[2])

    def _on_tile_read(self, r: int, ev: tuple) -> None:
        self._tile_read(r, ev[1])

    def _on_write_stage(self, r: int, ev: tuple) -> None:
        self._drain(r, ev[2][0])
        if ev[1].acc is not None:  # the value it stores reads an accumulator first
            self._read_acc(r, ev)
            self._retire_mmas(r, ev[1].acc)
        self._write_stage(r, ev[1], *ev[2])
        acc = ev[1].acc
        buf = ev[2][0].buffer(ev[2][1])
        self.copies[buf] = ([acc, self.versions.get(acc.index, [0])[0], ev[1]]
                            if acc is not None else None)

    def _on_read_acc(self, r: int, ev: tuple) -> None:
        if ev[1].acc is not None:
            self._read_acc(r, ev)
            self._check_companions(r, ev[1])
            self._retire_mmas(r, ev[1].acc)
        if ev[1].dest is not None:
            self._assign_acc(r, ev[1], ev[4])
            if self.versioned:
                self._updated(ev[1].dest, ev[1], ev[2])

    def _check_companions(self, r: int, ins: Instr) -> None:
        """A per-column vector read from a staged view (`scq[s].load()`) combined with an
        accumulator must come from the transaction that brought the MMA's `b` operand: when
        both stages complete on the same barrier, the same element and phase (CAKE-S021).
        A vector staged through another barrier (a bias loaded once) is not compared."""
        acc = ins.acc
        vecs = self.k.stage_loads(ins)
        if acc is None or not vecs:
            return
        writes = self.acc.get(acc.index, [[]])[0]
        last = writes[-1] if writes else None  # most often the MMA just before
        if last is None or last[0] != r or last[3].kind != MMA:
            last = next((w for w in reversed(writes) if w[0] == r and w[3].kind == MMA), None)
        mma_fill = last[5] if last else None
        if mma_fill is None:
            return
        for vec in vecs:
            fill = self.vec_fill[r].get(id(vec))
            if fill is None:
                continue
            (b, i), (b2, i2) = self.k.elem_barrier[fill[2]], self.k.elem_barrier[mma_fill[2]]
            if b is not b2 or (fill[2], fill[3]) == (mma_fill[2], mma_fill[3]):
                continue
            mma = last[3]
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
        # its last MMA into it (not an assignment): most often the last write
        last = writes[-1] if writes else None
        if last is None or last[0] != r or last[2] == -1:
            last = next((w for w in reversed(writes) if w[0] == r and w[2] != -1), None)
        if last is None:
            return
        clock = last[1]
        self.inflight[r] = [rec for rec in self.inflight[r] if rec[1] > clock]
        done = [rec for rec in self.outstanding[r] if rec[1] <= clock]
        if not done:
            return
        self.commits[r] += 1
        for rec in done:
            rec[2] = self.commits[r]
        self.outstanding[r] = [rec for rec in self.outstanding[r] if rec[1] > clock]
        self.vc[r][self.R + self.E + r] = self.commits[r]

    # ---- barriers ------------------------------------------------------------------------------

    def _stale_parity(self, r: int, wait: Instr, e: int, m: int) -> None:
        """CAKE-S042: a wait for phase m - 1 while phase m - 2, which the role skipped, is not
        known complete. A parity wait passes whenever the barrier's phase count has the
        parity it waits for, so with only m - 2 phases complete it passes on phase m - 3's
        completion and reads a stage before the phase it waits for refilled it."""
        b, i = self.k.elem_barrier[e]
        roles = self.k.roles
        skip = self.skips.get((r, self.k.barriers.index(b)))
        notes: list[tuple[Operation | None, str]] = []
        if skip is not None:
            notes.append((skip.op, f"role {roles[r].name} passes over phase {m - 2} of "
                                   f"{b.elem(i)} here"))
        self._report("race", Finding(
            "CAKE-S042", wait.op,
            f"role {roles[r].name} waits for phase {m - 1} of {b.elem(i)} at line "
            f"{line_of(wait.op)}{self.where} while phase {m - 2}, which it skipped, may "
            f"still be incomplete: a parity wait for phase {m - 1} passes as soon as the barrier "
            f"shows {'its initial parity' if m == 2 else f'phase {m - 3} complete'}, so it "
            "could pass before the data it waits for arrives", notes,
            help=f"hand the turn over: the role that waits for phase {m - 2} arrives on a "
                 f"barrier after that wait (after its last wait on `{b.name}` of the tile), "
                 f"and role {roles[r].name} waits on that barrier before line "
                 f"{line_of(wait.op)}"))

    def _arrive(self, r: int, ev: tuple, arr: list[int]) -> None:
        e = ev[2]
        pending = self.pending
        # `arr` is the arriver's own copy: the first arrival of a phase takes it as is.
        if pending[e]:
            pvc = self.pend_vc[e]
            _join(pvc, arr)
        else:
            pvc = self.pend_vc[e] = arr
        pending[e] += 1
        if pending[e] < self.init[e]:
            return
        q = self.completed[e]
        pvc[self.R + e] = q + 1
        self.phase_vc[e].append(pvc)
        self.completer[e].append((r, ev[1], ev[4]))
        self.completed[e] = q + 1
        pending[e] = 0
        # Completing phase q is safe only after every consumer observed phase q - 1.
        n = q - 1 + self.fwf[e]
        waits = self.waits[e]
        for c in self.consumers[e]:
            lst = waits.get(c, ())
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
        bufs = ins.view.buffers  # `buffer(s)` without the call: s is in range
        key = bufs[s] if s < len(bufs) else ins.view.buffer(s)
        st = self.stage.get(key)
        if st is None:
            st = self.stage[key] = [[], []]
        commits = self.R + self.E
        for rec in st[1]:
            # `_after_end(vc, rec)`, inlined: a refill meets each read since the last fill
            end = rec[2]
            if end == -1:
                if vc[rec[0]] >= rec[1]:
                    continue
            elif end is not None and vc[commits + rec[0]] >= end:
                continue
            self._war(w, ins, rec, s)
        if st[0] and not st[1]:
            prev = st[0][-1]
            if prev[0] != w and not self._fill_seen(vc, prev):
                what = "TMA load" if prev[2] is not None else "`store`"
                self._report("race", Finding(
                    "CAKE-S003", ins.op,
                    f"role {self.k.roles[w].name} refills {ins.view.name}[{s}] at line "
                    f"{line_of(ins.op)} before the {what} of role {self.k.roles[prev[0]].name} "
                    f"into it (line {line_of(prev[4].op)}) is known to be complete{self.where}",
                    [(prev[4].op, f"the other {'load' if prev[2] is not None else 'store'} is "
                                  "issued here")],
                    help="order the two loads through a barrier the first one completes"))
        p = self.completed[e]
        st[0].append([w, vc[w], e, p, ins])
        st[1] = []

    def _fill_seen(self, vc: list[int], fill: list) -> bool:
        """Whether a clock `vc` is ordered after the fill `fill` of a stage: [role, clock,
        barrier element (None for a role's own stores), phase, instr]. TMA data is known
        with the phase it completes; stores once an arrival after them reaches `vc`."""
        if fill[2] is None:
            return vc[fill[0]] >= fill[1]
        return vc[self.R + fill[2]] >= fill[3] + 1

    def _write_stage(self, w: int, ins: Instr, view: View, s: int) -> None:
        """`view[s].store` by role w: its threads overwrite the stage now. Every earlier read
        of the stage (another role's, or this role's own MMA, whose operand reads end only
        at a commit or an accumulator read) and every earlier fill must be ordered before."""
        vc = self.vc[w]
        name, roles = f"{view.name}[{s}]", self.k.roles
        st = self.stage.setdefault(view.buffer(s), [[], []])
        for rec in st[1]:
            q, reader = rec[0], rec[3]
            own_done = q == w and (rec[2] == -1 or (rec[2] is not None and not self.tc_commit[w]))
            if own_done or self._after_end(vc, rec):
                continue
            if rec[5] and q != w:  # read before anything wrote the stage: this store fills it
                self._read_before_fill(
                    w, ins, q, reader, name, "writes with `store`",
                    f"hand the stage over: `lm.arrive` on a barrier in role {roles[w].name} "
                    f"after the store (and `lm.fence_proxy()`), `lm.wait` on it in role "
                    f"{roles[q].name} before the read", other=reader.op)
                continue
            if self._bulk_race(w, ins, rec, name, "overwrites {} with `store`"):
                continue
            if q == w:
                self._report("race", Finding(
                    "CAKE-S041", ins.op,
                    f"role {roles[w].name} overwrites {name} with `store` at line "
                    f"{line_of(ins.op)} while its own MMA at line {line_of(reader.op)} may "
                    f"still read it asynchronously{self.where}",
                    [(reader.op, "this MMA reads the stage asynchronously")],
                    help="retire the MMA first: `lm.commit` its group to a barrier (and, on "
                         "sm_100a, wait on that barrier) or read its accumulator before the "
                         "store, or store into another stage"), other=reader.op)
                continue
            self._still_reading(w, ins, q, reader, name, "overwrites {} with `store`",
                                "the store", other=reader.op)
        if st[0] and not st[1]:
            prev = st[0][-1]
            if prev[2] is not None and not self._fill_seen(vc, prev):
                self._report("race", Finding(
                    "CAKE-S003", ins.op,
                    f"role {roles[w].name} overwrites {name} with `store` at line "
                    f"{line_of(ins.op)} before the TMA load into it (line {line_of(prev[4].op)}) "
                    f"is known to be complete{self.where}",
                    [(prev[4].op, "the load is issued here")],
                    help="wait on the barrier the load completes before storing into the stage, "
                         "or store into another stage"))
        st[0].append([w, vc[w], None, None, ins])
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
            self._read_before_fill(w, ins, q, reader, name, "fills",
                                   f"wait on `{ins.barrier.name}` (the barrier this load "
                                   "completes) before reading the stage")
            return
        if self._bulk_race(w, ins, rec, name, "refills {}"):
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
        self._still_reading(w, ins, q, reader, name, "refills {}", "refilling")

    def _drain_for(self, r: int, b: Barrier) -> None:
        """Role r, with TMA stores in flight, arrives on `b`: where a consumer of b writes
        bytes a TMA store of r reads, its leader waits for the stores first (targets/emit:
        drain_bulk_stores)."""
        self._drain(r, *(v for c in b.cons if c != r for v in self.writes[c]))

    def _drain(self, r: int, *views: cake.ViewOp | View) -> None:
        """Role r writes bytes of `views` (or arrives for a role that does): first its leader
        waits until its TMA stores from overlapping views have read their stages
        (targets/emit: drain_bulk_stores), so those reads end here, in r's program order."""
        if not self.bulk[r]:
            return
        ops = [v.op if isinstance(v, View) else v for v in views]
        left = []
        for rec in self.bulk[r]:
            if any(cake.views_overlap(rec[4][0].op, v) for v in ops):
                rec[1], rec[2] = self.vc[r][r], -1
            else:
                left.append(rec)
        self.bulk[r] = left

    def _bulk_race(self, w: int, ins: Instr, rec: list, name: str, verb: str) -> bool:
        """CAKE-S060: role w writes a stage that another role's `T.tma_store` copies out,
        not ordered after a point where that role waits for the copy to have read it (its
        next write of the view, or an arrival for a role that writes it): the copy reads
        asynchronously, so an arrival that does not wait for it orders nothing."""
        q, reader = rec[0], rec[3]
        if q == w or not isinstance(reader.op, cake.TmaStoreStageOp):
            return False
        roles = self.k.roles
        notes: list[tuple[Operation | None, str]] = [
            (reader.op, f"role {roles[q].name} copies {name} out here; the copy goes on "
                        "after the `tma_store` returns")]
        rel = self._release(q, rec[1], self.vc[w][q]) if rec[2] is None else None
        if rel is not None:
            notes.append((rel.op, "this `lm.arrive` does not wait for the copy to read the "
                                  "stage"))
        self._report("race", Finding(
            "CAKE-S060", ins.op,
            f"role {roles[w].name} {verb.format(name)} at line {line_of(ins.op)} while the "
            f"`tma_store` of role {roles[q].name} at line {line_of(reader.op)} may still be "
            f"reading it{self.where}: a TMA store reads its stage asynchronously, until role "
            f"{roles[q].name} next writes those bytes or arrives for a role that does (where "
            "it waits for its stores)", notes,
            help=f"let role {roles[q].name} arrive on a barrier that role {roles[w].name} waits "
                 "on before it rewrites the stage (that arrival waits for the copy), or stage "
                 "the tile in SMEM no other role writes"),
            other=reader.op)
        return True

    def _read_before_fill(self, w: int, ins: Instr, q: int, reader: Instr, name: str,
                          verb: str, help: str, other: Operation | None = None) -> None:
        """CAKE-S002: role q read stage `name` before anything filled it, and role w's fill
        (`verb`: "fills", "writes with `store`") is not ordered after that read."""
        roles = self.k.roles
        self._report("race", Finding(
            "CAKE-S002", reader.op,
            f"role {roles[q].name} reads {name} at line {line_of(reader.op)}, which role "
            f"{roles[w].name} {verb} at line {line_of(ins.op)} with nothing ordering the read "
            f"after it{self.where}",
            [(ins.op, f"role {roles[w].name} {verb.split()[0]} {name} here")],
            help=help), other=other)

    def _still_reading(self, w: int, ins: Instr, q: int, reader: Instr, name: str, verb: str,
                       before: str, other: Operation | None = None) -> None:
        """CAKE-S003: role w writes stage `name` (`verb`, e.g. "refills {}") while role q's
        read of it (`reader`) may still be going on."""
        roles = self.k.roles
        what, release = _stage_reader(reader)
        self._report("race", Finding(
            "CAKE-S003", ins.op,
            f"role {roles[w].name} {verb.format(name)} at line {line_of(ins.op)} while role "
            f"{roles[q].name} may still be reading it ({what} at line {line_of(reader.op)})"
            f"{self.where}",
            [(reader.op, f"role {roles[q].name} reads {name} here")],
            help=f"before {before}, wait on a barrier that role {roles[q].name} releases with "
                 f"{release} (an empty barrier)"), other=other)

    def _updated(self, acc: Acc, ins: Instr, it: int) -> None:
        v = self.versions.get(acc.index)
        if v is None:
            v = self.versions[acc.index] = [0, {}]
        if v[0] not in v[1]:
            v[1][v[0]] = (ins, it)  # the first write after version v[0]
        v[0] += 1

    def _stale_copy(self, r: int, ins: Instr, opnd: tuple, it: int) -> None:
        """CAKE-S043: an MMA reads a stage that holds a `store`d copy of a register tile (a
        loop-carried state staged as an operand) which has been written again since, in an
        earlier iteration than this read: this iteration reads the state of an older one.
        Reading the old copy in the iteration that updates the tile is the chunked form's
        `O = Q̃ S_old` and is not flagged; a tile of another role handed over by `store` is
        the barrier protocol's (its next copy is a refill, CAKE-S003)."""
        copy = self.copies.get(opnd[0].buffer(opnd[1]))
        if copy is None or copy[0].owner != r:
            return
        acc, version, store = copy
        v = self.versions.get(acc.index)
        if v is None or v[0] == version:
            return
        update, when = v[1][version]
        if when == it:
            return
        name = f"{opnd[0].name}[{opnd[1]}]"
        self._report("race", Finding(
            "CAKE-S043", ins.op,
            f"the MMA at line {line_of(ins.op)} reads {name}, the copy of `{acc.name}` stored "
            f"at line {line_of(store.op)}, but `{acc.name}` has been written since (line "
            f"{line_of(update.op)}, an earlier iteration): it reads a stale state{self.where}",
            [(store.op, f"`{acc.name}` is copied into {name} here"),
             (update.op, f"`{acc.name}` is written again here, and not copied after it")],
            help=f"store `{acc.name}` into {name} again after line {line_of(update.op)} (once "
                 "that write has completed: reading the tile waits for it), before the next "
                 "iteration's MMA reads the stage"), other=store.op)

    def _mma(self, r: int, ev: tuple) -> None:
        ins: Instr = ev[1]
        vc = self.vc[r]
        if self.copies:  # a stage holds a `store`d copy of a register tile
            for opnd in (ev[2], ev[3]):
                if opnd is not None:
                    self._stale_copy(r, ins, opnd, ev[6])
        a, b = ev[2], ev[3]
        if a is not None:
            self._read_stage(r, ins, *a)
        fill_b = self._read_stage(r, ins, *b) if b is not None else None
        acc = ins.acc
        if acc is None:
            return
        st = self.acc.get(acc.index)
        if st is None:
            st = self.acc[acc.index] = [[], []]
        if not ev[4] and not st[0]:
            self._report("uninit", Finding(
                "CAKE-S012", ins.op,
                f"the MMA at line {line_of(ins.op)} accumulates into `{acc.name}` (init=False) "
                f"before any MMA initialised it{self.where}",
                [(acc.op, f"`{acc.name}` is declared here")],
                help="pass `init=True` on the first MMA into it, e.g. `init=(k == 0)`"))
        unread = self.unread.get(acc.index)
        if unread is None:
            unread = self.unread[acc.index] = []
        if ev[4] and unread:
            self._discard(ins, ev[5], unread, acc, "the MMA", "the partial sums of", "the MMA")
        self.unread[acc.index] = [(ins, ev[5])] if ev[4] else [*unread, (ins, ev[5])]
        for rec in st[1]:
            if rec[0] != r and not self._after_end(vc, rec):
                self._overwrite(r, ins, rec, acc)
        prev = st[0][-1] if st[0] else None
        if prev is not None and prev[0] != r and not self._after_end(vc, prev):
            self._acc_race(r, ins, prev, acc, "overwrites")
        prev = next((rec for rec in reversed(self.inflight[r]) if rec[3] is ins), None) \
            if ins.tiles else None
        if prev is not None:
            changed = [self.assigned[t.index] for t in ins.tiles
                       if self.assigned.get(t.index, (0, None))[0] > prev[1]]
            if changed:
                self._repack(r, ins, ev[5], changed[0][1])
        rec = [r, vc[r], None, ins, ev[4], fill_b]
        st[0].append(rec)
        st[1] = []
        self.outstanding[r].append(rec)
        if self.versioned:
            self._updated(acc, ins, ev[6])
        if acc.owner == r:
            self.inflight[r].append(rec)

    def _repack(self, r: int, ins: Instr, step: tuple | None, assign: Instr) -> None:
        """A register-A MMA issued again, its A source reassigned since, while its previous
        instance may still read the A fragments: the new values are packed into the
        registers that wgmma reads (CAKE-S044)."""
        at = f" ({step[0]} = {step[1]})" if step is not None else ""
        acc, tile = ins.acc, assign.tiles[0]
        self._report("race", Finding(
            "CAKE-S044", ins.op,
            f"the MMA at line {line_of(ins.op)} packs `{tile.name}` into its register A "
            f"operand again{at}, reassigned at line {line_of(assign.op)}, while its previous "
            f"instance may still read those registers: nothing retired it since{self.where}",
            [(assign.op, f"`{tile.name}` is reassigned here"),
             (_loop_of(ins.op), "this loop issues the MMA again; a wgmma reads its register "
                                "A operand asynchronously, until a `wgmma.wait_group` "
                                "retires it")],
            help=f"retire the previous MMA before the next one is issued: read `{acc.name}` "
                 f"(e.g. the rescale `{acc.name} = {acc.name} * alpha`) or an accumulator of "
                 "a later MMA of the role in between"))

    def _acc_write(self, r: int, ev: tuple) -> None:
        """An assignment to a register tile that a register-A MMA packs: dates its value."""
        self.assigned[ev[1].tiles[0].index] = (self.vc[r][r], ev[1])

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
        """A read of stage s: an MMA operand (ends at the role's next commit), a TMA store's
        (ends at the role's next write of its view, `_drain`) or a synchronous read (ends
        where it stands). Returns the fill it reads when that is well ordered."""
        vc = self.vc[r]
        bufs = view.buffers  # `buffer(s)` without the call: s is in range
        key = bufs[s] if s < len(bufs) else view.buffer(s)
        st = self.stage.get(key)
        if st is None:
            st = self.stage[key] = [[], []]
        writes = st[0]
        flags = self.read_flags.get(ins)
        if flags is None:
            flags = self.read_flags[ins] = _read_flags(ins)
        mma, pending, bulk, vec = flags
        pending = pending or (mma and self.async_reg_mma)
        rec = [r, vc[r], None if pending or bulk else -1, ins, (view, s), not writes]
        st[1].append(rec)
        if pending:
            self.outstanding[r].append(rec)
        if bulk:
            self.bulk[r].append(rec)
        if not writes:
            self.unwritten.append(rec)
            return None
        # The newest fill this read is ordered after; a newer one is a refill that raced it.
        seen = len(writes) - 1
        last = writes[seen]
        # `_fill_seen(vc, last)`, inlined: most reads are of the newest fill
        if (vc[last[0]] >= last[1] if last[2] is None else vc[self.R + last[2]] > last[3]):
            if self.k.reuses and last[4].view is not view:
                stale = stale_read(self.k, r, ins.op, view, s, last, self.where)
                if stale is not None:
                    self._report("race", stale, other=last[4].op)
            if vec:
                self.vec_fill[r][id(ins.op)] = last
            return last
        seen = next((i for i in range(seen - 1, -1, -1)
                     if self._fill_seen(vc, writes[i])), None)
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
        if w[2] is None:  # written by the threads of another role (`view[s].store`)
            self._report("race", Finding(
                "CAKE-S002", ins.op,
                f"role {roles[r].name} reads {name} at line {line_of(ins.op)} before the "
                f"`store` of role {roles[w[0]].name} into it (line {line_of(w[4].op)}) is "
                f"known to be complete{self.where}",
                [(w[4].op, f"role {roles[w[0]].name} writes {name} here")],
                help=f"hand the stage over: `lm.arrive` on a barrier in role "
                     f"{roles[w[0]].name} after the store, `lm.wait` on it before line "
                     f"{line_of(ins.op)}"))
            return
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
        self.unread[acc.index] = []
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

    def _assign_acc(self, r: int, ins: Instr, step: tuple[str, int] | None) -> None:
        """An assignment to an MMA accumulator of the role (S017 keeps other roles out): a
        synchronous write that initialises it, as an MMA with init=True would, after the
        role's own MMAs into it (the emitter retires them first); sums of MMAs that nothing
        read since are discarded (CAKE-S023)."""
        acc = ins.dest
        self._retire_mmas(r, acc)
        self.assigned[acc.index] = (self.vc[r][r], ins)
        unread = self.unread.get(acc.index)
        if unread and acc not in map(self.k.acc_of, tile_leaves(ins.op.value)):
            self._discard(ins, step, unread, acc, "the assignment", "the partial sums of",
                          "the MMA",
                          help=f"read `{acc.name}` before assigning it (the epilogue, or a "
                               f"rescale `{acc.name} = {acc.name} * alpha`), or drop the MMAs "
                               "whose sums it discards")
        st = self.acc.setdefault(acc.index, [[], []])
        st[0].append([r, self.vc[r][r], -1, ins, True, None])
        st[1] = []
        self.unread[acc.index] = []

    def _discard(self, ins: Instr, step: tuple | None, unread: list[tuple[Instr, tuple | None]],
                 tile: Acc, writer: str, what: str, by: str, help: str | None = None
                 ) -> None:
        """An initialising write while earlier writes are unread: their results are lost
        (CAKE-S023), reported at the write that discards them."""
        lines = sorted({line_of(i.op) for i, _ in unread})
        steps = [x for _, x in unread if x is not None]
        span = ""
        if steps and len(steps) == len(unread) and len({v for v, _ in steps}) == 1:
            lo, hi = min(x for _, x in steps), max(x for _, x in steps)
            span = f" from {steps[0][0]} = {lo}" + (f"..{hi}" if hi != lo else "")
        at = f", {step[0]} = {step[1]}" if step is not None else ""
        first = unread[0][0]
        many = "s" if len(lines) > 1 else ""
        mma = by == "the MMA"
        self._report("uninit", Finding(
            "CAKE-S023", ins.op,
            f"{writer} at line {line_of(ins.op)} starts `{tile.name}` afresh (init=True{at}) "
            f"before anything reads {what} {by}{'s' if mma and len(unread) > 1 else ''} "
            f"at line{many} {', '.join(map(str, lines))}{span}: they are discarded"
            f"{self.where}",
            [(first.op, f"`{tile.name}` is written here{span} and not read before line "
                        f"{line_of(ins.op)}"),
             (tile.op, f"`{tile.name}` is declared here")],
            help=help or (f"initialise `{tile.name}` only on the first step of each tile, "
                          f"e.g. `init=({step[0] if step else 'k'} == 0)`, and read it (the "
                          "epilogue) before the next tile starts it afresh")))

    # ---- running tiles of `lm.argmin` ---------------------------------------------------------

    def _tile_write(self, r: int, ev: tuple) -> None:
        """`lm.argmin` merges into its running tiles (or an assignment sets one): the first
        write must start each afresh, and a fresh start must not drop unread minima."""
        ins, init, step = ev[1], ev[2], ev[3]
        argmin = isinstance(ins.op, cake.ArgminOp)
        for tile in ins.tiles:
            unread = self.unread.get(tile.index)
            if unread is None and not init:
                self._report("uninit", Finding(
                    "CAKE-S012", ins.op,
                    f"`lm.argmin` at line {line_of(ins.op)} merges into `{tile.name}` "
                    f"(init=False) before any `lm.argmin` initialised it, so it compares "
                    f"against registers nobody wrote{self.where}",
                    [(tile.op, f"`{tile.name}` is declared here")],
                    help="pass `init=True` on the first `lm.argmin` of each row block, e.g. "
                         f"`init=({step[0] if step else 'k'} == 0)`"))
            elif init and unread:
                self._discard(ins, step, unread, tile,
                              "`lm.argmin`" if argmin else "the assignment",
                              "the minima merged into it by", "`lm.argmin`")
            if argmin:
                self.unread[tile.index] = [(ins, step)] if init or unread is None else [
                    *unread, (ins, step)]
            else:
                self.unread[tile.index] = []  # an assigned value is not a discarded result

    def _tile_read(self, r: int, ins: Instr) -> None:
        for tile in ins.tiles:
            if self.unread.get(tile.index) is None:
                self._report("uninit", Finding(
                    "CAKE-S013", ins.op,
                    f"role {self.k.roles[r].name} reads `{tile.name}` at line "
                    f"{line_of(ins.op)} but no `lm.argmin` has written it{self.where}",
                    [(tile.op, f"`{tile.name}` is declared here")],
                    help="make sure an `lm.argmin` with init=True runs first; a loop that may "
                         "run 0 times needs at least one iteration, e.g. "
                         "`lm.max(lm.cdiv(K, 128), 1)`"))
            self.unread[tile.index] = []

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
        bi = self.k.barriers.index(b)
        for c, lst in sorted(waiters.items()):
            if len(lst) >= done:
                continue
            if (c, bi) in self.skips and all(
                    any(q < len(o) and o[q] for o in self.waits[e].values())
                    for q in range(len(lst), done)):
                continue  # a consumer taking turns: another one waits for the rest
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
                what = (f"{VERB[ins.kind]} at line {line_of(ins.op)} completes phase {p} of "
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
        arrivers = {k.roles[r].name for r, prog in enumerate(k.programs) for x in walk(prog)
                    if x.barrier is b and x.kind != WAIT}
        if arrivers:
            return f"no role ever completes {b.elem(i)}", fix
        return (f"no role ever arrives on `{b.name}`",
                f"complete `{b.name}` in a producer role (`lm.arrive`, `lm.commit` or a TMA "
                f"load with barrier={b.name})")


def _tmem_mma_roles(k: Kernel) -> list[bool]:
    """Per role: whether it issues MMAs into TMEM (computed once per kernel: every launch's
    simulation asks)."""
    got = k.memo.get("tmem_mma_roles")
    if got is None:
        got = k.memo["tmem_mma_roles"] = [
            any(i.kind == MMA and isinstance(i.acc.op, cake.TmemOp)
                for i in walk(prog) if i.acc is not None) for prog in k.programs]
    return got


def _stores_tiles(k: Kernel) -> bool:
    """Whether a role stores a register tile into a stage (`view[s].store(tile)`: a copy
    whose staleness CAKE-S043 checks; once per kernel)."""
    got = k.memo.get("stores_tiles")
    if got is None:
        got = k.memo["stores_tiles"] = any(
            i.kind == WRITE_STAGE and i.acc is not None for prog in k.programs
            for i in walk(prog))
    return got


def _written_views(k: Kernel) -> list[list[cake.ViewOp]]:
    """Per role: the views whose bytes it writes (once per kernel; read-only)."""
    got = k.memo.get("written_views")
    if got is None:
        got = k.memo["written_views"] = [
            [v for v in map(cake.written_view, (i.op for i in walk(prog))) if v]
            for prog in k.programs]
    return got


def _held_commits(k: Kernel) -> frozenset[Instr]:
    """The commits of `k.held_commits`, as instructions (once per kernel): an xDSL op hashes
    through a Python method, an instruction by its identity."""
    got = k.memo.get("held_commits")
    if got is None:
        got = k.memo["held_commits"] = frozenset(
            i for prog in k.programs for i in walk(prog)
            if i.kind == COMMIT and i.op in k.held_commits)
    return got  # type: ignore[return-value]


def _loop_of(op: Operation) -> Operation:
    """The innermost `lm.range` loop around `op` (the op itself outside any loop)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, cake.ForOp):
        parent = parent.parent_op()
    return parent or op


def _join(dst: list[int], src: list[int]) -> None:
    """`dst` = the componentwise max of the two clocks, in place (others hold `dst`: a role's
    clock, a phase's). A compare per component and a store only where `src` is ahead: 3-4x
    faster than `map(max, ...)`, whose builtin call per component dominated the simulation
    of kernels with many mbarriers."""
    for i, x in enumerate(src):
        if x > dst[i]:
            dst[i] = x


def _read_flags(ins: Instr) -> tuple[bool, bool, bool, bool]:
    """How a read of a stage by `ins` ends: (an MMA; its reads end at a commit whatever the
    target: an MMA into TMEM or without accumulator; a TMA store's, at the role's next
    write; a `view[s].load()`, whose fill CAKE-S021 compares)."""
    mma = ins.kind == MMA
    return (mma, mma and (ins.acc is None or isinstance(ins.acc.op, cake.TmemOp)),
            isinstance(ins.op, cake.TmaStoreStageOp),
            ins.kind == READ_STAGE and type(ins.op) is cake.StageLoadOp)


def _stage_reader(ins: Instr) -> tuple[str, str]:
    """How findings name a read of a stage, and how its role releases the stage after it."""
    if ins.kind == MMA:
        return "MMA", "`lm.commit` after its MMA"
    what = {cake.SumSqOp: "`lm.sum_sq`", cake.TmaStoreStageOp: "`tma_store`"}.get(
        type(ins.op), "`load()`")
    return what, "`lm.arrive` after that read"


def simulate_all(k: Kernel, fwf: list[bool], ex: Exploration, tcgen05: bool = False,
                 wgmma: bool = False) -> list[Finding]:
    """Simulates every explored launch and returns the findings of the most fundamental
    category any of them shows (an out-of-range index, then deadlocks, races, lapping,
    uninitialised reads, unconsumed phases), from the smallest launch showing it. `tcgen05`:
    the target's `lm.commit` after MMAs into TMEM is a tcgen05.commit; `wgmma`: its MMAs into
    registers are wgmma (asynchronous), not mma.sync."""
    oob = next((run.oob for run in ex.runs if run.oob), None)
    if oob:
        return _unique(oob)
    best: tuple[int, list[Finding], list[list[tuple]]] = (len(_CATEGORIES) + 1, [], [])
    for run, rank, found in verdicts(k, fwf, ex, tcgen05, wgmma):
        if found and rank < best[0]:
            best = (rank, found, run.traces)  # type: ignore[assignment]
            if rank == 0:
                break  # a deadlock ranks first: only a lower rank replaces `best`, so no later run
                # can change the answer
    found = best[1]
    if found:
        # Report the first event that departs from the protocol, the failure as its note; a
        # release already reported where it stands (CAKE-S004) says more than CAKE-S026.
        first = first_departure(k, fwf, best[2], found[0])
        if first is not None and (first.code != "CAKE-S026"
                                  or all(f.op is not first.op for f in found)):
            return [first]
    return found


def verdicts(k: Kernel, fwf: list[bool], ex: Exploration, tcgen05: bool = False,
             wgmma: bool = False, share: bool = True) -> Iterator[tuple[Run, int, list[Finding]]]:
    """Each complete fresh run with its verdict (`Simulation.verdict`), in order. With
    `share`, a run whose simulation shares the beginning of an earlier one's continues from a
    copy of that one's state where they depart (forks.py) instead of simulating it again."""
    fresh = [i for i, run in enumerate(ex.runs) if run.complete and run.fresh]
    planner = Planner([(i, ex.runs[i].traces, ex.runs[i].describe)  # type: ignore[misc]
                       for i in fresh])
    forked: dict[int, Fork] = {}
    for n, i in enumerate(fresh):
        run = ex.runs[i]
        fork = forked.pop(i, None)
        if fork is not None:
            sim, (r, e, progress) = fork.sim, fork.start
        else:
            sim = Simulation(k, fwf, run.traces, run.describe, tcgen05,  # type: ignore[arg-type]
                             wgmma, planner.waited(run.traces))  # type: ignore[arg-type]
            r, e, progress = 0, 0, False
        if share:
            # Only departures still ahead of every role (a continued run has come some way).
            ahead = [e if q == r else p for q, p in enumerate(sim.pos)]
            sim.plan([f for f in planner.forks(n)
                      if all(a > x for a, x in zip(f.at, ahead))])
        planned = sim.forks
        sim.resume(r, e, progress)
        sim.finish()
        forked.update((f.run, f) for f in planned if f.sim is not None)
        yield (run, *sim.verdict())


def _unique(fs: list[Finding]) -> list[Finding]:
    seen: dict[int, Finding] = {}
    for f in fs:
        seen.setdefault(id(f.op), f)
    return list(seen.values())
