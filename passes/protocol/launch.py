"""Launches: the parameter, grid and block values under which the role programs are explored.

Every counterexample must be one a real launch produces, so the model chooses values only
for the *leaves* of the kernel's scalar expressions (its `LM.i32` parameters, tensor extents
`T.shape[i]` and `lm.sm_count()`) and computes everything else from them: every loop bound,
the grid (`lm.grid(...)`, so `lm.num_blocks(d)`) and, per launch, the block that runs
(`lm.block_id(d)`: the first, the second and the last block of the grid). Bounds written as
different expressions of the same parameters (`lm.cdiv(K, 64)` in one role, `(K + 63) // 64`
in another) then always agree, and a grid of two or more blocks shows a role that numbers
its ring by the global tile index against a peer that numbers it by its own iteration.

Representatives: for each runtime loop (its trip count) and runtime branch (its condition),
and each leaf it depends on, the smallest leaf values (the other leaves at their base value)
that give every trip-count class that behaves differently: 0, 1, and around each pipeline
depth (fewer than the stages, the stages, one more, laps); grids of 1, 2 and 3 blocks where a
program reads its block index or the grid. `Launches.envs()` combines them, smallest first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import product

from cakec.dialects import cake
from cakec.passes.protocol.exprs import Env, ExprInfo, Exprs
from cakec.passes.protocol.model import MMA, Instr, Kernel, walk

Goal = tuple[Callable[[Env], "int | None"], tuple, list[int]]  # value, its key, targets

MAX_LAUNCHES = 64  # leaf assignments explored per kernel (before block choices)
SEARCH_HI = 1 << 22  # largest leaf value the inversion tries

_FREE = ("param", "dim", "lm.sm_count")  # leaves the launch chooses
_GRID = ("lm.block_id", "lm.num_blocks")  # leaves the grid and the block determine
#: their keys in an environment, per grid dimension
_DIMS = [(("lm.num_blocks", str(d)), ("lm.block_id", str(d))) for d in range(3)]


@dataclass
class Leaf:
    """A value the launch chooses: a scalar parameter, a tensor extent, the SM count."""

    key: tuple
    text: str
    lo: int
    base: int  # its value while another leaf is varied
    reps: set[int] = field(default_factory=set)


def leaf_keys(key: tuple) -> Iterator[tuple]:
    """The leaves (free and grid) that the expression `key` is computed from."""
    if key and key[0] in _FREE + _GRID:
        yield key
        return
    for x in key:
        if isinstance(x, tuple):
            yield from leaf_keys(x)


def trip_count(lb: int, ub: int, step: int) -> int:
    if step <= 0:
        return 0
    n = (ub - lb + step - 1) // step  # ceil((ub - lb) / step): no builtin call, hot
    return n if n > 0 else 0


class Launches:
    """The leaves of one kernel, their representatives, and the launches built from them."""

    def __init__(self, exprs: Exprs, grid: cake.GridOp | None, goals: list[Goal],
                 block_used: set[int]):
        self.grid = [exprs(d) for d in grid.dims] if grid is not None else []
        #: the leaves the grid is computed from
        self.grid_leaves = {lk for dim in self.grid for lk in leaf_keys(dim.key)}
        self.block_used = {d for d in block_used if d < len(self.grid)}
        goals = list(goals)
        for d in sorted(self.block_used):
            goals.append((self.grid[d].fn, self.grid[d].key, [1, 2, 3]))
        texts = {info.key: info.text for info in exprs.memo.values()}
        self.leaves: dict[tuple, Leaf] = {}
        for _, key, _ in goals:
            for lk in leaf_keys(key):
                if lk[0] in _FREE and lk not in self.leaves:
                    sm = lk[0] == "lm.sm_count"
                    self.leaves[lk] = Leaf(lk, "sm_count" if sm else texts.get(lk, "?"),
                                           1 if sm else 0, 1)
        sm = self.leaves.get(("lm.sm_count", ""))
        if sm is not None and self.block_used:
            # Two SMs unless varied: a persistent grid then has two blocks whenever there is
            # work for two. With more SMs than work, the last blocks get none.
            sm.base = 2
            sm.reps |= {1, 8}
        fed: dict[tuple, list[int]] = {lk: [] for lk in self.leaves}
        for i, (_, key, _) in enumerate(goals):
            for lk in dict.fromkeys(leaf_keys(key)):
                if lk in fed:
                    fed[lk].append(i)
        # Leaves that feed exactly the same bounds (M and N through tiles = tm * tn) mostly
        # reach every class of those bounds alone: the first varies, the others keep their
        # base. The next one varies only for the classes still missing (`seg + (tail − seg) *
        # last` reaches them through `tail` only, with `seg` at its base).
        missing: dict[tuple[int, ...], list[list[int]]] = {}
        for lk in sorted(self.leaves, key=lambda lk: self.leaves[lk].text):
            todo = missing.setdefault(tuple(fed[lk]), [goals[i][2] for i in fed[lk]])
            if any(todo):
                todo[:] = [self._invert(self.leaves[lk], goals[i][0], targets) if targets
                           else [] for i, targets in zip(fed[lk], todo)]
        for leaf in self.leaves.values():
            leaf.reps.add(leaf.base)
            if leaf is not sm:  # its grids of 1, 2 and 8 blocks differ only with more work
                self._distinct(leaf, [goals[i][0] for i in fed[leaf.key]])

    def _distinct(self, leaf: Leaf, fns: list[Callable[[Env], int | None]]) -> None:
        """Keeps one value of `leaf` per outcome of the bounds it feeds (others at base):
        K = 0 and K = 1 both give lm.max(lm.cdiv(K, 64), 1) = 1."""
        base = {k: lf.base for k, lf in self.leaves.items()}
        kept: dict[tuple, int] = {}
        base_sig: tuple = ()
        for x in sorted(leaf.reps):
            base[leaf.key] = x
            env = self.complete(base)
            sig = (x,) if env is None else tuple(f(dict(env)) for f in fns)
            kept.setdefault(sig, x)
            if x == leaf.base:
                base_sig = sig
        leaf.reps = set(kept.values())
        leaf.base = kept[base_sig]  # the smallest value that behaves as the base

    def complete(self, values: Env, block: int = 0) -> Env | None:
        """The environment of a launch: the chosen leaves, the grid computed from them, and
        block `block` of each used grid dimension (0 first, 1 second, -1 last); None when
        the grid has no block there (nothing runs)."""
        grid = self._grid(values)
        return None if grid is None else self._at(values, grid, block)

    def _grid(self, values: Env) -> list[int] | None:
        """The grid's size in each dimension under the chosen leaves; None without a block."""
        return self._sizes(dict(values))  # the grid's values cache themselves in the copy

    def _sizes(self, env: Env) -> list[int] | None:
        """`_grid` in `env`, a launch's own environment (the grid's values cache there)."""
        sizes = [1, 1, 1]
        for d, dim in enumerate(self.grid[:3]):
            g = dim.fn(env)
            if g is None or g < 1:
                return None
            sizes[d] = g
        return sizes

    def _at(self, values: Env, grid: list[int], block: int) -> Env:
        """`complete(values, block)`, the grid computed."""
        env = dict(values)
        self._place(env, grid, block)
        return env

    def _place(self, env: Env, grid: list[int], block: int) -> None:
        """Puts the grid's size and the block's index in each dimension into `env`."""
        for (size, index), g, b in zip(_DIMS, grid, self._blocks(grid, block)):
            env[size] = g
            env[index] = b

    def _blocks(self, grid: list[int], block: int) -> tuple[int, ...]:
        """The block's index in each dimension: `block` (0 first, 1 second, -1 last) in the
        used ones, 0 in the others."""
        if block == 0:  # the launch search's every launch
            return (0,) * len(grid)
        used = self.block_used
        return tuple([0 if d not in used else (g - 1 if block < 0 else min(block, g - 1))
                      for d, g in enumerate(grid)])

    def _invert(self, leaf: Leaf, fn: Callable[[Env], int | None],
                targets: list[int]) -> list[int]:
        """Adds to `leaf.reps` the smallest value giving each target (others at base);
        returns the targets no value gives."""
        base = {k: lf.base for k, lf in self.leaves.items()}
        seen: dict[int, int | None] = {}  # every target's search starts from `lo` again
        # A grid that does not read this leaf is the same for every value tried: the launch
        # of each value is then that of the base with the leaf's value in it.
        varies = leaf.key in self.grid_leaves
        grid = None if varies else self._grid(base)
        fixed = None if grid is None else self._at(base, grid, 0)

        def f(x: int) -> int | None:
            if x not in seen:
                if varies:
                    base[leaf.key] = x
                    env = dict(base)
                    g = self._sizes(env)
                    if g is not None:
                        self._place(env, g, 0)
                elif fixed is not None:
                    env, g = dict(fixed), grid
                    env[leaf.key] = x
                else:
                    g = None
                seen[x] = None if g is None else fn(env)
            return seen[x]

        # The smallest value that launches anything (a grid of cdiv(M, 128) needs M >= 1).
        lo, hi = next((x for x in (leaf.lo, leaf.lo + 1, leaf.lo + 2) if f(x) is not None),
                      None), SEARCH_HI
        flo, fhi = (None, None) if lo is None else (f(lo), f(hi))
        if flo is None or fhi is None:
            return list(targets)
        up = fhi >= flo
        missed = []
        for t in targets:
            if (flo >= t) if up else (flo <= t):
                x = lo
            else:
                # Galloping then bisection: most targets are small values.
                a, b = lo, lo + 1
                while b < hi and ((fb := f(b)) is None or (fb < t if up else fb > t)):
                    a, b = b, min(hi, 2 * b)
                while b - a > 1:
                    m = (a + b) // 2
                    fm = f(m)
                    if fm is not None and (fm >= t if up else fm <= t):
                        b = m
                    else:
                        a = m
                x = b
            if f(x) == t:
                leaf.reps.add(x)
            else:
                missed.append(t)
        return missed

    def envs(self) -> list[Env]:
        """Launch environments to explore, smallest first: leaf assignments (at most
        MAX_LAUNCHES), each with the first block and, for grids of two or more blocks where
        the block matters, the second and the last."""
        leaves = sorted(self.leaves.values(), key=lambda lf: lf.text)
        reps = [sorted(lf.reps) for lf in leaves]
        sizes = [len(r) for r in reps]
        # Combinations as ranks into each leaf's representatives, smallest first.
        if math.prod(sizes) <= MAX_LAUNCHES:
            combos = list(product(*(range(n) for n in sizes)))
        else:
            # One leaf varies at a time around the base values and around the largest values
            # of the others, plus the diagonal: every class of every leaf is seen at least once.
            low = tuple(r.index(lf.base) for r, lf in zip(reps, leaves))
            top = tuple(n - 1 for n in sizes)
            combos = [c[:i] + (v,) + c[i + 1:] for c in (low, top) for i, n in enumerate(sizes)
                      for v in range(n)]
            combos += [tuple(min(j, n - 1) for n in sizes) for j in range(max(sizes))]
            combos = sorted(set(combos), key=lambda c: (sum(c), c))[:MAX_LAUNCHES]
        combos.sort(key=lambda c: (sum(c), c))
        out: list[Env] = []
        for c in combos:
            values = {lf.key: r[i] for lf, r, i in zip(leaves, reps, c)}
            grid = self._grid(values)
            if grid is None:
                continue
            # Combinations differ in some leaf's value, so their launches differ; one
            # combination's launches differ only in the blocks placed (the second block of a
            # grid of two is its last).
            placed: set[tuple[int, ...]] = set()
            for block in ((0, 1, -1) if self.block_used else (0,)):
                blocks = self._blocks(grid, block)
                if blocks not in placed:
                    placed.add(blocks)
                    out.append(self._at(values, grid, block))
        return out

    def describe(self, env: Env) -> str:
        """' with K = 0, grid = 2, block 1': the launch, as far as the programs depend on it
        ('' when they depend on nothing)."""
        parts = [f"{lf.text} = {env[k]}" for k, lf in sorted(self.leaves.items(),
                                                            key=lambda kv: kv[1].text)
                 if k in env]
        if self.block_used:
            dims = max(self.block_used) + 1
            grid = [env.get(("lm.num_blocks", str(d)), 1) for d in range(dims)]
            block = [env.get(("lm.block_id", str(d)), 0) for d in range(dims)]
            parts.append(f"grid = {_tuple(grid)}, block {_tuple(block)}")
        return " with " + ", ".join(parts) if parts else ""


def _tuple(xs: list[int]) -> str:
    return str(xs[0]) if len(xs) == 1 else "(" + ", ".join(map(str, xs)) + ")"


def launches_of(k: Kernel) -> Launches:
    goals, block_used = _goals(k.programs, classes(k.depths))
    return Launches(k.exprs, k.grid, goals, block_used)


def classes(depths: list[int]) -> list[int]:
    """Trip counts that behave differently: 0, 1, and around each pipeline depth."""
    out = {0, 1}
    for s in depths[-3:]:
        out |= {s - 1, s, s + 1, 2 * s + 1}
    return sorted(out)


def _goals(programs: list[list[Instr]], classes: list[int]) -> tuple[list[Goal], set[int]]:
    """What the representatives must reach: per runtime loop its trip count in every class,
    per runtime branch both outcomes, per runtime stage index or MMA `init` its first
    values; and the grid dimensions whose block index or size a program reads."""
    goals: list[Goal] = []
    block_used: set[int] = set()
    seen: set[tuple] = set()

    def add(fn: Callable[[Env], int | None], key: tuple, targets: list[int]) -> None:
        if key not in seen:
            seen.add(key)
            goals.append((fn, key, targets))

    def note(info: ExprInfo | None) -> None:
        if info is None:
            return
        for lk in leaf_keys(info.key):
            if lk[0] in _GRID:
                block_used.add(int(lk[1] or 0))

    for prog in programs:
        for ins in walk(prog):
            if ins.kind == "loop":
                lb, ub, step = ins.lb, ins.ub, ins.step
                for x in (lb, ub, step):
                    note(x)
                if not ins.runtime:
                    continue
                if not (lb.ivdep or ub.ivdep or step.ivdep):
                    def trips(env: Env, lb=lb.fn, ub=ub.fn, step=step.fn) -> int | None:
                        a, b, s = lb(env), ub(env), step(env)
                        return None if a is None or b is None or s is None else \
                            trip_count(a, b, s)
                    add(trips, ("trips", lb.key, ub.key, step.key), classes)
                else:
                    for x in (lb, ub, step):
                        for b in x.bases():
                            add(b.fn, b.key, classes)
            elif ins.kind == "branch":
                c = ins.cond
                note(c)
                if c.runtime and not c.ivdep and c.key[0] == "cmp":
                    # Both outcomes of a comparison: values around its threshold.
                    x, y = c.parts
                    add(lambda env, x=x.fn, y=y.fn: _diff(x(env), y(env)),
                        ("diff", x.key, y.key), [-1, 0, 1])
                elif c.runtime:
                    for b in c.bases():
                        add(b.fn, b.key, [0, 1] if b.hi <= 1 and b.lo >= 0 else classes)
            else:
                opnds = (ins.a, ins.b) if ins.kind == MMA else ()
                for x in (ins.stage, ins.init, ins.count, *(o[1] for o in opnds if o)):
                    note(x)
                    if x is not None and x.runtime:
                        for b in x.bases():
                            add(b.fn, b.key, [0, 1, 2, 3])
    return goals, block_used


def _diff(a: int | None, b: int | None) -> int | None:
    return None if a is None or b is None else a - b
