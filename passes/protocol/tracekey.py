"""What a role's trace depends on: the keys under which explore() reuses a trace.

* `signatures(k)`: per role, the runtime values its program reads (the maximal runtime
  sub-expressions no loop variable feeds). Two launches that agree on them give the role the
  same trace, its findings included.
* `shift_keys(k)`: per role, a coarser key where one exists. A persistent tile loop
  `for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0))` whose body reads `t` only as
  `t // lm.num_blocks(0)` (a CTA's own iteration count) runs the same events on every block
  with the same trip count and the same `lm.block_id(0) // lm.num_blocks(0)`: iteration j
  reads `lb // step + j`; a test whether another iteration follows (`t + lm.num_blocks(0) <
  tiles`: j + 1 < trip count) is decided by the trip count. The key is then that loop's
  (trip count, lb // step) and the other values the program reads. It decides the whole run,
  budget ticks included, so a trace without findings is reused under it (findings name
  their launch: those are traced).

Only the role's single top-level loop is keyed so: iterations are numbered by their loop
values in order of first appearance (trace.py), which a shifted `t` keeps as long as no
other loop at its depth can produce the same values. An event that names its innermost loop
value (`t.step()`: MMA, running-tile writes, accumulator assignments) directly in that
loop's body reads `t` itself, and rules the key out too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from cakec.passes.protocol.exprs import Env, ExprInfo
from cakec.passes.protocol.launch import trip_count
from cakec.passes.protocol.model import MMA, READ_ACC, TILE_WRITE, Instr, Kernel, walk

ShiftKey = Callable[[Env], "tuple | None"]  # None: no reuse under this launch


@dataclass(frozen=True)
class Shift:
    """A role's coarser key: `key(env)` is (trip count, lb // step, the other values read) of
    its top-level `loop` ((None, lb < ub, ...) for a step below 1)."""

    key: ShiftKey
    loop: Instr


def operands(ins: Instr) -> Iterator[ExprInfo]:
    """The scalar expressions the tracer evaluates for `ins`."""
    for x in (ins.lb, ins.ub, ins.step, ins.cond, ins.stage, ins.init, ins.count,
              *(o[1] for o in (ins.a, ins.b) if isinstance(o, tuple))):
        if isinstance(x, ExprInfo):
            yield x


def signatures(k: Kernel) -> list[list[ExprInfo]]:
    """Per role, the runtime values its trace depends on: two launches that agree on them
    give the role the same trace."""
    out = []
    for prog in k.programs:
        bases: dict[tuple, ExprInfo] = {}
        for ins in walk(prog):
            for x in operands(ins):
                for b in x.bases():
                    bases.setdefault(b.key, b)
        out.append(list(bases.values()))
    return out


def shift_keys(k: Kernel) -> list[Shift | None]:
    """Per role, the coarser key of the module docstring (None where the role has none)."""
    return [_shift_key(prog) for prog in k.programs]


def _top_loops(prog: list[Instr]) -> Iterator[Instr]:
    """The loops at the top level of a program (branches looked into)."""
    for ins in prog:
        if ins.kind == "loop":
            yield ins
        elif ins.kind == "branch":
            yield from _top_loops(ins.body)
            yield from _top_loops(ins.orelse or [])


def _names_step(prog: list[Instr]) -> bool:
    """Whether an event directly in this body (not in a nested loop) names the loop value."""
    for ins in prog:
        if ins.kind in (MMA, TILE_WRITE) or (ins.kind == READ_ACC and ins.dest is not None):
            return True
        if ins.kind == "branch" and (_names_step(ins.body) or _names_step(ins.orelse or [])):
            return True
    return False


def _shift_key(prog: list[Instr]) -> Shift | None:
    loops = list(_top_loops(prog))
    if len(loops) != 1 or not loops[0].runtime or _names_step(loops[0].body):
        return None
    loop = loops[0]
    iv, step_key = ("iv", id(loop.iv)), loop.step.key
    next_key = ("+", iv, step_key)
    bases: dict[tuple, ExprInfo] = {}

    def collect(e: ExprInfo) -> bool:
        """Adds the bases of `e` (but `t // step`'s); False where `t` is read otherwise."""
        if e.runtime and not e.ivdep:
            bases.setdefault(e.key, e)
            return True
        if e.key == iv:
            return False
        if e.key[0] == "//" and e.parts[0].key == iv and e.parts[1].key == step_key:
            return True  # lb // step + j
        if e.key[0] == "cmp" and e.key[1] % 6 in (2, 5) and e.parts[0].key == next_key \
                and e.parts[1].key == loop.ub.key:
            return True  # `t + step < ub`: j + 1 < trip count (`>=`: its negation)
        return all(collect(p) for p in e.parts)

    for ins in walk(prog):
        if ins is not loop and not all(collect(x) for x in operands(ins)):
            return None
    lb, ub, step = loop.lb.fn, loop.ub.fn, loop.step.fn
    others = list(bases.values())

    def key(env: Env) -> tuple | None:
        a, b, s = lb(env), ub(env), step(env)
        if a is None or b is None or s is None:
            return None
        shape = (trip_count(a, b, s), a // s) if s > 0 else (None, a < b)
        return (*shape, *(x.fn(env) for x in others))
    return Shift(key, loop)
