"""Register-tile lowering shared by every backend: the element expression evaluator
(constants and arithmetic, with `x ± y * z` fused into one fmaf), given a backend's layout of
the leaf tiles, and the layout-neutral parts of vector loads and `lm.sum_sq`.

Arithmetic emits no code of its own: the op that consumes a tile expression (`lm.argmin`,
`T.store`) evaluates it per register in its backend's layout, so `c_sq - 2.0 * acc` costs one
FMA per element and nothing is materialised (targets/sm90/tiles.py, targets/sm100/tiles.py)."""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import SSAValue

from cakec.dialects.cake import (
    ArgminOp, StageLoadOp, StageOp, SumSqOp, TileBinaryOp, TileLoadOp, TileStoreOp, ViewOp,
    dtype_name,
)
from cakec.targets.emit.cexpr import paren, scaled
from cakec.targets.emit.emitter import KernelEmitter, RoleState
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sku import SWIZZLE_SPAN

_CTYPE = {"f32": "float", "i32": "i32"}
_BINARY = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}"}
#: A target's tile layout for `evaluate`: the C expression of one element of a leaf tile.
Leaf = Callable[[KernelEmitter, SSAValue], str]


def tile_role(em: KernelEmitter) -> RoleState:
    if em.role is None:
        raise Unsupported("a register tile outside a role")
    return em.role


def tile_dims(v: SSAValue) -> tuple[int, int]:
    dims = v.type.dims()  # type: ignore[attr-defined]
    if len(dims) != 2:
        raise Unsupported(f"a rank-{len(dims)} register tile")
    return dims[0], dims[1]


def tile_ctype(v: SSAValue) -> str:
    name = dtype_name(v.type.element_type)  # type: ignore[attr-defined]
    if name not in _CTYPE:
        raise Unsupported(f"a {name} register tile")
    return _CTYPE[name]


def evaluate(em: KernelEmitter, v: SSAValue, leaf: Leaf) -> str:
    """C expression for one element of the tile expression `v`: constants and arithmetic
    here (target-neutral), every other tile through `leaf`, the target's register layout."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return float_literal(owner.value.value.data)
    if isinstance(owner, TileBinaryOp):
        return _fused(em, owner, leaf) or "({})".format(_BINARY[owner.kind.data].format(
            evaluate(em, owner.lhs, leaf), evaluate(em, owner.rhs, leaf)))
    return leaf(em, v)


def _fused(em: KernelEmitter, op: TileBinaryOp, leaf: Leaf) -> str | None:
    """`x ± y * z` as one fmaf. Written out, `c_sq - 2.0 * acc` compiles to two FADDs (the
    compiler turns the exact doubling into an add and will not contract it): one more
    instruction per score element, 1/8 of the MMA time at D = 128."""
    kind = op.kind.data
    if kind == "sub":
        candidates = [(op.rhs, op.lhs, "-")]
    elif kind == "add":
        candidates = [(op.rhs, op.lhs, ""), (op.lhs, op.rhs, "")]
    else:
        return None
    for product, other, sign in candidates:
        mul = product.owner
        if isinstance(mul, TileBinaryOp) and mul.kind.data == "mul":
            y, z = evaluate(em, mul.lhs, leaf), evaluate(em, mul.rhs, leaf)
            return f"fmaf({sign}{paren(y)}, {z}, {evaluate(em, other, leaf)})"
    return None


def float_literal(x: float) -> str:
    if math.isinf(x):
        return ("-" if x < 0 else "") + "__int_as_float(0x7f800000)"
    return f"{x!r}f"


def tile_leaves(v: SSAValue) -> list[SSAValue]:
    owner = v.owner
    if isinstance(owner, TileBinaryOp):
        return tile_leaves(owner.lhs) + tile_leaves(owner.rhs)
    return [v]


def tile_binary(em: KernelEmitter, op: TileBinaryOp) -> None:
    """Nothing to emit: the consumer evaluates the expression per register."""
    if not all(isinstance(u.operation, (TileBinaryOp, ArgminOp, TileStoreOp))
               for u in op.result.uses):
        raise Unsupported("tile arithmetic consumed other than by `lm.argmin` or `store`")


def tile_coords(em: KernelEmitter, op: TileLoadOp | TileStoreOp, run: int) -> str:
    """`{c0, ..., cR-1 * run}`: element coordinates (the last one is the run's start)."""
    cs = [em.val(c) for c in op.coords]
    cs[-1] = scaled(cs[-1], run)
    return "{" + ", ".join(cs) + "}"


def load_other(op: TileLoadOp, ctype: str) -> str:
    """The value a vector load reads outside its tensor, as a C literal of type `ctype`."""
    return float_literal(op.other.value.data) if ctype == "float" else str(int(op.other.value.data))


def declare_row_vector(em: KernelEmitter, op: TileLoadOp | StageLoadOp, per_thread: int,
                       layout: str) -> tuple[str, str, int]:
    """Declare the register array a (1, N) vector load fills, N / `per_thread` elements per
    thread, with the layout's comment; returns (var, ctype, N). Other shapes are not
    lowered."""
    rows, cols = tile_dims(op.result)
    if rows != 1 or cols % 8:
        raise Unsupported(f"`load` of a ({rows}, {cols}) vector (one value per column, "
                          "N a multiple of 8, is supported)")
    ctype = tile_ctype(op.result)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"{ctype} {var}[{cols // per_thread}];  // (1, {cols}): {layout}")
    return var, ctype, cols


def load_row_vector(em: KernelEmitter, op: TileLoadOp, helper: str, per_thread: int,
                    layout: str) -> None:
    """`T.load` of a (1, N) vector through the target's device helper (bounds, `other`)."""
    var, ctype, cols = declare_row_vector(em, op, per_thread, layout)
    rank = len(op.coords)
    with em.block():
        em.line(f"const i32 cake_c[{rank}] = {tile_coords(em, op, cols)};")
        em.line(f"{helper}<{cols}, {rank}, {ctype}>({var}, {em.val(op.tensor)}, cake_c, "
                f"({ctype}){load_other(op, ctype)});")


def _swizzle_mask(tag: str) -> int:
    """The address bits (from bit 7 up) a swizzle XORs into the 16-byte chunk index: one less
    than the chunks in its span (128b: 7, 64b: 3, 32b: 1, none: 0)."""
    span = SWIZZLE_SPAN[tag]
    return span // 16 - 1 if span else 0


def sum_sq_layout(em: KernelEmitter, op: SumSqOp) -> tuple[int, int, int, int, int]:
    """(rows, atoms, atom bytes, row pitch, swizzle mask) of the stage `lm.sum_sq` reads:
    derive-smem's column blocks of rows × pitch bytes, each row read in 16-byte chunks."""
    stage = op.source.owner
    view = stage.view.owner if isinstance(stage, StageOp) else None
    if not isinstance(view, ViewOp):
        raise Unsupported("`lm.sum_sq` of a value that is not a view stage")
    rows = op.result.type.dims()[0]  # type: ignore[attr-defined]
    atoms, atom_bytes = em.attr_int(view, "cake.atoms"), em.attr_int(view, "cake.atom_bytes")
    pitch = atom_bytes // rows
    if pitch % 16 or pitch * rows != atom_bytes:
        raise Unsupported(f"`lm.sum_sq` of rows of {pitch} bytes (a multiple of 16 is needed)")
    return rows, atoms, atom_bytes, pitch, _swizzle_mask(em.attr_str(view, "cake.swizzle"))
