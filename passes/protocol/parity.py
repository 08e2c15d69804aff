"""The parity of every wait, for `derive-barriers` to write on the wait ops.

`parities(k, fwf)` gives each wait its parity per dynamic instance (a list, from one trace of
its role) when the loops around and before it have static trip counts, else a closed form
(`(k // S) & 1`, `k & 1`, flipped for a first-wait-free barrier) or "tracked at run time".
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import arith
from xdsl.ir import Operation

from cakec.passes.protocol.model import SKIP, WAIT, Instr, Kernel, walk
from cakec.passes.protocol.trace import trace_role

PARITY_LIST_MAX = 1024  # longest per-iteration parity list written on a wait


def parities(k: Kernel, fwf: list[bool]) -> dict[Operation, list[int] | str]:
    """The parity of every wait: per dynamic instance (a list) when the loops around it and
    before it have static trip counts, else a closed form or "tracked at run time"."""
    out: dict[Operation, list[int] | str] = {}
    for r, prog in enumerate(k.programs):
        static = _static_waits(prog)
        shortened: set[Operation] = set()
        # Room for the longest list written; a longer role gets closed forms instead.
        trace = trace_role(k, r, {}, [16 * PARITY_LIST_MAX], [], shortened, PARITY_LIST_MAX)
        lists: dict[Operation, list[int]] = {}
        counts: dict[int, int] = {}
        for ev in trace or ():
            if ev[0] in (WAIT, SKIP):  # a skipped phase flips the parity as a wait does
                n = counts.get(ev[2], 0)
                counts[ev[2]] = n + 1
                if ev[0] == SKIP:
                    continue
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
                    tainted.update(id(x.barrier) for x in walk(ins.body + (ins.orelse or []))
                                   if x.kind in (WAIT, SKIP))
            elif ins.kind == SKIP and (dynamic or ins.count.runtime):
                tainted.add(id(ins.barrier))
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
    same = [x for x in walk(prog) if x.kind in (WAIT, SKIP) and x.barrier is ins.barrier]
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
