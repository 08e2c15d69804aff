"""Which scalar parameter each tensor extent equals, and which extents a kernel caps: read
off the kernel's tile accesses, for the launch metadata's `shape_bindings`, `shape` and
`max_shape` (docs/abi.md, "Scalars tied to extents"), which both launchers check.

An access (`tma_load`, `copy_load`, `tma_store`, `T.load`, `T.store`) addresses elements
[c_d * e_d, (c_d + 1) * e_d) of dimension d, c_d its tile coordinate and e_d the tile's
extent there. The kernel tiles dimension d by a scalar S when c_d runs over
[0, cdiv(S, e_d)) (over [0, S) for e_d = 1): it then covers exactly S elements, so S must
equal T.shape[d] (a smaller S leaves part of T unread or unwritten; a larger one reads zeros
or skips stores past the end and computes something else than asked). A coordinate's range
is known when it is a loop variable, a block index, `x % y` or `x // y` over products of
such tile counts (`t % tiles_m`, `t // tiles_m` in a persistent loop over tiles_m × B work
items), `x // c` of such an x for a constant c (below x's bound), `P - 1 - x` for such an x
below P (the last tiles first), or `a if c else b` of two such values (the larger bound). Otherwise (a swizzled tile order through `lm.min`) the scalars it is computed from
stand in: the `cdiv(S, e_d)` among them, unless a raw scalar count is among them too (a batch
index stacked on the tiles, `b * tiles_m + m`, covers more). A dimension is bound only when exactly one scalar
qualifies over every access of (T, d). A dimension that every access reaches at the
constant coordinate 0 with an extent e > 1 is covered up to e elements only: its cap.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from cakec.dialects.cake import (
    BlockIdOp, CopyLoadOp, ForOp, GridOp, KernelOp, NumBlocksOp, TensorType, TileLoadOp,
    SplitStoreOp, TileStoreOp, TmaLoadOp, TmaStoreOp, TmaStoreStageOp,
)
from cakec.passes.derive_common import walk

#: A tile count: scalar S divided (rounding up) by a constant e; (S, 1) is S itself.
Atom = tuple[str, int]


@dataclass(frozen=True)
class Extents:
    bound: dict[tuple[str, int], str]   # (tensor, dim) -> the scalar its extent equals
    limit: dict[tuple[str, int], int]   # (tensor, dim) -> the largest extent the kernel covers

    def shape_bindings(self) -> dict[str, list[object]]:
        """Each bound scalar at its first (tensor, dim) in parameter order (the others go
        to the tensor's `shape`)."""
        out: dict[str, list[object]] = {}
        for (t, d), s in self.bound.items():
            out.setdefault(s, [t, d])
        return out


def _const(v: SSAValue) -> int | None:
    op = v.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data
    return None


class _Reach:
    """Per SSA value: the tile counts it is a product of (`value`), the product its range
    is bounded by (`bound`), and every tile count it is computed from (`deps`)."""

    def __init__(self, kernel: KernelOp):
        names = [a.data for a in kernel.param_names.data]
        self.scalar = {a: names[a.index] for a in kernel.body.block.args
                       if not isinstance(a.type, TensorType)}
        grids = [op for op in kernel.body.block.ops if isinstance(op, GridOp)]
        self.grid = list(grids[0].dims) if grids else []
        self._deps: dict[SSAValue, frozenset[Atom]] = {}

    def _atom(self, v: SSAValue) -> Atom | None:
        if v in self.scalar:
            return (self.scalar[v], 1)
        op = v.owner
        if isinstance(op, arith.CeilDivSIOp) and op.lhs in self.scalar:
            e = _const(op.rhs)
            return (self.scalar[op.lhs], e) if e is not None and e > 0 else None
        return None

    def _grid_dim(self, op: Operation) -> SSAValue | None:
        d = op.dim.value.data  # type: ignore[attr-defined]
        return self.grid[d] if d < len(self.grid) else None

    def value(self, v: SSAValue) -> Counter | None:
        """v as a product of tile counts (constant 1 is the empty product), else None."""
        atom = self._atom(v)
        if atom is not None:
            return Counter([atom])
        op = v.owner
        if _const(v) == 1:
            return Counter()
        if isinstance(op, arith.MuliOp):
            a, b = self.value(op.lhs), self.value(op.rhs)
            return a + b if a is not None and b is not None else None
        if isinstance(op, NumBlocksOp) and (g := self._grid_dim(op)) is not None:
            return self.value(g)
        return None

    def bound(self, v: SSAValue) -> Counter | None:
        """A product P of tile counts with 0 <= v < P for the kernel's runs, else None."""
        op = v.owner
        if isinstance(v, BlockArgument):
            loop = v.owner.parent_op() if v.owner is not None else None
            return self.value(loop.ub) if isinstance(loop, ForOp) else None
        if isinstance(op, BlockIdOp) and (g := self._grid_dim(op)) is not None:
            return self.value(g)
        if isinstance(op, arith.RemSIOp):
            return self.value(op.rhs)
        if isinstance(op, arith.FloorDivSIOp):
            whole, part = self.bound(op.lhs), self.value(op.rhs)
            if whole is not None and part is not None and not part - whole:
                return whole - part
            if whole is not None and (_const(op.rhs) or 0) > 1:
                # `x // c` for a constant c >= 2 lies below x's bound (a causal order that
                # pairs a head's tile T-1-k with tile k: k = r // 2 for r < T)
                return whole
        if isinstance(op, arith.SelectOp):  # `a if c else b`: the larger of the two bounds
            a, b = self.bound(op.lhs), self.bound(op.rhs)
            if a is not None and b is not None:
                return b if not a - b else a if not b - a else None
        if isinstance(op, arith.SubiOp) and isinstance(op.lhs.owner, arith.SubiOp) \
                and _const(op.lhs.owner.rhs) == 1:
            # `P - 1 - x` with 0 <= x < P' <= P (the last tiles first) lies in [0, P)
            whole, part = self.value(op.lhs.owner.lhs), self.bound(op.rhs)
            if whole is not None and part is not None and not part - whole:
                return whole
        return None

    def deps(self, v: SSAValue) -> frozenset[Atom]:
        if v in self._deps:
            return self._deps[v]
        atom = self._atom(v)
        op = v.owner
        if atom is not None:
            out = frozenset({atom})
        elif isinstance(v, BlockArgument):
            loop = v.owner.parent_op() if v.owner is not None else None
            out = (self.deps(loop.lb) | self.deps(loop.ub) | self.deps(loop.step)
                   if isinstance(loop, ForOp) else frozenset())
        elif isinstance(op, (BlockIdOp, NumBlocksOp)) and (g := self._grid_dim(op)) is not None:
            out = self.deps(g)
        else:
            out = frozenset().union(*(self.deps(o) for o in op.operands))
        self._deps[v] = out
        return out

    def tiling(self, c: SSAValue, e: int) -> set[str]:
        """The scalars S whose tile count cdiv(S, e) bounds coordinate c."""
        bound = self.bound(c)
        if bound is not None:
            return {s for s, div in bound if div == e}
        atoms = self.deps(c)
        if e > 1 and any(div == 1 for _, div in atoms):
            # A coordinate that also counts a raw scalar (`b * tiles_m + m`: a batch or head
            # index) stacks several tilings in one dimension: it covers more than cdiv(S, e)
            # tiles, so no scalar's tiling gives the extent.
            return set()
        return {s for s, div in atoms if div == e}


def _accesses(kernel: KernelOp):
    """(op, tensor argument, per-dimension tile extent) for every tile access; vectors run
    along the last dimension, (M, N) blocks cover the last two."""
    for op in walk(kernel):
        if isinstance(op, (TmaLoadOp, CopyLoadOp)):
            tile = op.view.type.dims()
        elif isinstance(op, (TmaStoreOp, SplitStoreOp)):
            tile = op.value.type.dims()
        elif isinstance(op, TmaStoreStageOp):
            tile = op.source.type.dims()
        elif isinstance(op, (TileLoadOp, TileStoreOp)):
            vec = op.result if isinstance(op, TileLoadOp) else op.value
            dims = tuple(vec.type.dims())
            tile = dims if 1 not in dims else (max(dims),)  # an (M, N) block, or a run
        else:
            continue
        rank = len(op.tensor.type.dims())
        yield op, op.tensor, (1,) * (rank - len(tile)) + tuple(tile)


def extents(kernel: KernelOp) -> Extents:
    names = [a.data for a in kernel.param_names.data]
    reach = _Reach(kernel)
    tiled_by: dict[tuple[str, int], set[str]] = {}
    capped: dict[tuple[str, int], int | None] = {}
    for op, tensor, tile in _accesses(kernel):
        if not isinstance(tensor, BlockArgument):
            continue
        for d, (c, e) in enumerate(zip(op.coords, tile)):
            key = (names[tensor.index], d)
            tiled_by.setdefault(key, set()).update(reach.tiling(c, e))
            prev = capped.get(key, e)
            capped[key] = max(prev, e) if _const(c) == 0 and prev is not None else None
    order = sorted(tiled_by, key=lambda k: (names.index(k[0]), k[1]))
    bound = {k: next(iter(tiled_by[k])) for k in order if len(tiled_by[k]) == 1}
    limit = {k: e for k in order if (e := capped[k]) is not None and e > 1 and k not in bound}
    return Extents(bound, limit)
