"""Frontend for register-tile values: vector loads and stores, broadcasting arithmetic,
`lm.sum_sq` and `lm.argmin` (the vocabulary of fused GEMM epilogues such as k-means).

Tiles are 2-D: an (M, N) accumulator, an (M, 1) vector with one value per row, a (1, N)
vector with one value per column. Arithmetic broadcasts as numpy does, so
`csq - 2.0 * acc` subtracts twice each accumulator element from its column's value. Shape
and dtype mistakes are reported here, at the expression that makes them (CAKE-T007 for
shapes and kinds, CAKE-D002 for dtypes).
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr, f32, i64

from cakec.frontend import ast
from cakec.diagnostics import Note, Span, error
from cakec.dialects import cake
from cakec.frontend.values import Value, decl_note, describe

#: Surface operator → `cake.tile_binary` kind.
TILE_OPS = {"+": "add", "-": "sub", "*": "mul"}


def _shape(v: Any) -> tuple[int, ...]:
    return v.ssa.type.dims()


def _dtype(v: Any) -> str:
    return cake.dtype_name(v.ssa.type.element_type)


def _show(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"


def broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy broadcasting of two 2-D shapes, or None when they do not broadcast."""
    if len(a) != len(b):
        return None
    out = []
    for x, y in zip(a, b):
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(out)


def _is_vector(shape: tuple[int, ...]) -> bool:
    return len(shape) == 2 and 1 in shape


def tile_binop(fe: Any, e: ast.BinOp, lhs: Any, rhs: Any) -> Any:
    """`a OP b` where one side is a register tile (or a TMEM accumulator, read as one) and
    the other a tile or a number."""
    if e.op not in TILE_OPS:
        raise error("CAKE-T007", f"operator `{e.op}` is not defined on register tiles", e.span,
                    help="tiles support `+`, `-` and `*` (with numbers or other tiles)")
    values = []
    for v, n in ((lhs, e.left), (rhs, e.right)):
        if v.kind in ("tile", "tmem"):
            if _dtype(v) != "f32":
                raise error("CAKE-D002", f"tile arithmetic is on f32 tiles; this operand is "
                            f"{_dtype(v)}", n.span, notes=decl_note(v))
            if v.kind == "tmem":
                v = _read_tmem(fe, v, n.span)
        elif v.kind == "float" or (v.kind == "int" and v.is_const):
            if v.ssa is not None:
                raise error("CAKE-T007", "a tile can be combined with a constant number, not "
                            "a runtime scalar", n.span)
        else:
            raise error("CAKE-T007", f"operator `{e.op}` expects a register tile or a number, "
                        f"got {describe(v)}", n.span, notes=decl_note(v))
        values.append(v)
    lhs, rhs = values
    shapes = [_shape(v) for v in (lhs, rhs) if v.kind == "tile"]
    shape = shapes[0] if len(shapes) == 1 else broadcast(*shapes)
    if shape is None:
        raise error("CAKE-T007", f"tile shapes {_show(shapes[0])} and {_show(shapes[1])} do not "
                    "broadcast", e.span,
                    help="each dimension must agree or be 1: (M, 1) per row, (1, N) per column")
    operands = [v.ssa if v.kind == "tile" else fe._f32(v) for v in (lhs, rhs)]
    op = cake.TileBinaryOp.build(operands=operands, properties={
        "kind": StringAttr(TILE_OPS[e.op])}, result_types=[cake.TileType(shape, f32)])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": "f32"})


def _read_tmem(fe: Any, v: Any, span: Span) -> Any:
    """A TMEM accumulator named in tile arithmetic is read into the role's registers where
    the expression names it, exactly as `acc.to(lm.f32)` (cake.convert, tcgen05.ld), so the
    verifiers check that read like any other: lane quarters (H015), a wait after the MMA."""
    if fe.in_role is None:
        raise error("CAKE-T011", f"reading TMEM region `{v.info.get('name')}` in tile "
                    "arithmetic must happen inside a `with ROLE:` block", span,
                    help="compute the expression inside the role that reads the accumulator")
    op = cake.ConvertOp.build(operands=[v.ssa], result_types=[cake.TileType(_shape(v), f32)])
    fe._add(op, span)
    return Value("tile", span, ssa=op.result, info={"shape": _shape(v), "dtype": "f32"})


def _check_coords(recv: Any, b: dict[str, Any]) -> tuple[Any, ...]:
    coords = b["coords"].const
    if len(coords) != recv.info["rank"]:
        raise error("CAKE-T013", f"`coords` has {len(coords)} entries but tensor "
                    f"`{recv.info['name']}` has rank {recv.info['rank']}", b["coords"].span,
                    notes=[Note(recv.span, "declared here")])
    return coords


def _build_load(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    coords = _check_coords(recv, b)
    shape, dtype = b["shape"].const, b["dtype"].const
    if not _is_vector(shape):
        raise error("CAKE-T007", f"`load` reads a vector, shape (1, L) or (L, 1); got "
                    f"{_show(shape)}", b["shape"].span,
                    help="load a tile with `tma_load` into an SMEM view")
    if dtype not in ("f32", "i32"):
        raise error("CAKE-D002", f"`load` reads f32 or i32 vectors, not {dtype}",
                    b["dtype"].span)
    fe.note_tensor_dtype(recv, dtype, e.span)
    op = cake.TileLoadOp.build(
        operands=[recv.ssa, [fe._i32(c) for c in coords]],
        properties={"other": FloatAttr(float(b["other"].const), f32)},
        result_types=[cake.TileType(shape, cake.dtype_attr(dtype))])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": dtype})


def _build_store(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    coords = _check_coords(recv, b)
    value = b["value"]
    shape = _shape(value)
    if not (len(shape) == 2 and shape[1] == 1):
        raise error("CAKE-T007", f"`store` writes an (L, 1) vector (one value per row); this "
                    f"tile is {_show(shape)}", b["value"].span, notes=decl_note(value),
                    help="reduce it first, e.g. with `lm.argmin`")
    fe.note_tensor_dtype(recv, _dtype(value), e.span)
    fe._add(cake.TileStoreOp.build(operands=[recv.ssa, value.ssa,
                                             [fe._i32(c) for c in coords]]), e.span)
    return Value("none", e.span)


def _build_stage_load(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`view[s].load()`: the stage's (1, L) or (L, 1) f32/i32 vector in registers."""
    view = recv.info["view"]
    shape, dtype = tuple(view.info["shape"]), view.info["dtype"]
    name = view.info.get("name", "view")
    if not _is_vector(shape):
        raise error("CAKE-T007", f"`load` reads a vector stage, shape (1, L) or (L, 1); "
                    f"`{name}` is {_show(shape)}", e.span,
                    notes=[Note(view.span, f"`{name}` is declared here")],
                    help="whole tiles are MMA operands; `lm.sum_sq` reduces their rows")
    if dtype not in ("f32", "i32"):
        raise error("CAKE-D002", f"`load` reads f32 or i32 stages; `{name}` is {dtype}",
                    e.span, notes=[Note(view.span, f"`{name}` is declared here")])
    op = cake.StageLoadOp.build(operands=[recv.ssa],
                                result_types=[cake.TileType(shape, cake.dtype_attr(dtype))])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": dtype})


def _build_sum_sq(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    _axis_one(b)
    source = b["source"]
    st: cake.StageType = source.ssa.type
    if cake.dtype_name(st.element_type) != "bf16":
        raise error("CAKE-D002", f"`lm.sum_sq` reads bf16 stages; this one is "
                    f"{cake.dtype_name(st.element_type)}", b["source"].span)
    if len(st.dims()) != 2:
        raise error("CAKE-T007", f"`lm.sum_sq` reduces a 2-D stage; this one has shape "
                    f"{_show(st.dims())}", b["source"].span)
    shape = (st.dims()[0], 1)
    op = cake.SumSqOp.build(operands=[source.ssa], properties={"axis": IntegerAttr(1, i64)},
                            result_types=[cake.TileType(shape, f32)])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": "f32"})


def _axis_one(b: dict[str, Any]) -> None:
    if b["axis"].const != 1:
        raise error("CAKE-T010", f"only axis=1 (along each row) is supported, got "
                    f"axis={b['axis'].const}", b["axis"].span)


def _arg_span(e: ast.Call, position: int, name: str) -> Span:
    """Where argument `name` (or positional `position`) is written in the call."""
    if position < len(e.args):
        return e.args[position].span
    return next(kw.value.span for kw in e.kwargs if kw.name == name)


def _build_argmin(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    _axis_one(b)
    value, index, source = b["value"], b["index"], b["source"]
    if _dtype(source) != "f32":
        raise error("CAKE-D002", f"`lm.argmin` reduces an f32 tile; this one is "
                    f"{_dtype(source)}", _arg_span(e, 2, "source"))
    for position, (arg, dtype) in enumerate((("value", "f32"), ("index", "i32"))):
        _running_tile(fe, b[arg], dtype, _arg_span(e, position, arg), source, arg)
    fe._add(cake.ArgminOp.build(
        operands=[value.ssa, index.ssa, source.ssa, fe._i32(b["base"]), fe._i1(b["init"])],
        properties={"axis": IntegerAttr(1, i64)}), e.span)
    return Value("none", e.span)


def _running_tile(fe: Any, v: Any, dtype: str, span: Span, source: Any, arg: str) -> None:
    """The running minimum and index are `lm.regs` tiles of this role, one value per row
    of the source."""
    owner = v.ssa.owner
    rows = _shape(source)[0]
    if not isinstance(owner, cake.RegsOp):
        raise error("CAKE-T007", f"the `{arg}` of `lm.argmin` must be an `lm.regs` tile: it is "
                    "updated across calls", span, notes=decl_note(v),
                    help=f"declare one with `lm.regs(shape=({rows}, 1), dtype=lm.{dtype}, "
                    "role=...)` at kernel level")
    name = v.info.get("name", arg)
    role = owner.role.owner
    here = fe.in_role.info.get("name") if fe.in_role is not None else None
    if isinstance(role, cake.RoleOp) and here is not None and role.sym_name.data != here:
        raise error("CAKE-S017", f"role {here} updates register tile `{name}`, which lives in "
                    f"the registers of role {role.sym_name.data}", span,
                    notes=[Note(fe.spans[owner], f"`{name}` is declared here for role "
                                f"{role.sym_name.data}")],
                    help=f"do this inside `with {role.sym_name.data}:`")
    if _dtype(v) != dtype:
        raise error("CAKE-D002", f"`{name}` holds {_dtype(v)}, but `lm.argmin` keeps its "
                    f"{'minima' if arg == 'value' else 'indices'} in {dtype}", span,
                    notes=decl_note(v))
    if _shape(v) != (rows, 1):
        raise error("CAKE-T007", f"`{name}` has shape {_show(_shape(v))}, but the "
                    f"{_show(_shape(source))} tile it reduces needs ({rows}, 1): one value per "
                    "row", span, notes=decl_note(v))


TILE_BUILDERS = {
    "tensor.load": _build_load, "tensor.store": _build_store, "stage.load": _build_stage_load,
    "sum_sq": _build_sum_sq,
    "argmin": _build_argmin,
}

# Last, so that importing either module first works: frontend imports TILE_BUILDERS from here.
