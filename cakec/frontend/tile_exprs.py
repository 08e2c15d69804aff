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

from xdsl.dialects.builtin import FloatAttr, UnitAttr, f32, i1, i32, i64

from cakec.frontend import ast
from cakec.diagnostics import Note, Span, error
from cakec.dialects import cake
from cakec.interned import integer_attr, string_attr, tile_type
from cakec.frontend.values import Value, decl_note, describe

#: Surface operator → `cake.tile_binary` kind, and comparison → `cake.tile_cmp` predicate.
TILE_OPS = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
TILE_CMPS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


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


def _result(fe: Any, op: Any, span: Span) -> Value:
    fe._add(op, span)
    r = op.results[0]
    return Value("tile", span, ssa=r, info={"shape": r.type.dims(),
                                             "dtype": cake.dtype_name(r.type.element_type)})


def _operands(fe: Any, what: str, pairs: list[tuple[Any, Span]], dtypes: tuple[str, ...],
              span: Span) -> tuple[list[Any], tuple[int, ...], str]:
    """Tiles (a TMEM accumulator is read as one) and numbers combined elementwise: the
    operand values, their broadcast shape and their common dtype (one of `dtypes`; numbers
    take the tiles' dtype)."""
    values = []
    for v, n in pairs:
        if v.kind == "tmem":
            if _dtype(v) != "f32":
                raise error("CAKE-D002", f"{what} is on f32 tiles; this operand is "
                            f"{_dtype(v)}", n, notes=decl_note(v))
            v = _read_tmem(fe, v, n)
        elif v.kind not in ("tile", "float", "int"):
            raise error("CAKE-T007", f"{what} expects a register tile or a number, got "
                        f"{describe(v)}", n, notes=decl_note(v))
        values.append(v)
    tiles = [(v, n) for v, n in zip(values, (n for _, n in pairs)) if v.kind == "tile"]
    kinds = {_dtype(v) for v, _ in tiles}
    for v, n in tiles:
        if _dtype(v) not in dtypes:
            raise error("CAKE-D002", f"{what} is on {' or '.join(dtypes)} tiles; this operand "
                        f"is {_dtype(v)}", n, notes=decl_note(v),
                        help="convert it first with `.to(lm.f32)`"
                        if "f32" in dtypes and _dtype(v) in ("bf16", "f16") else None)
    if len(kinds) > 1:
        raise error("CAKE-D002", f"{what} combines an {' and an '.join(sorted(kinds))} tile",
                    span, help="convert one side with `.to(...)`")
    dtype = kinds.pop() if kinds else "f32"
    shapes = [_shape(v) for v, _ in tiles]
    # No tiles (`lm.where(pred, 0.0, 1.0)`): the caller takes the shape from elsewhere.
    shape: tuple[int, ...] | None = shapes[0] if shapes else ()
    for other in shapes[1:]:
        shape = broadcast(shape, other) if shape is not None else None
        if shape is None:
            raise error("CAKE-T007", f"tile shapes {_show(shapes[0])} and {_show(other)} do "
                        "not broadcast", span,
                        help="each dimension must agree or be 1: (M, 1) per row, (1, N) per "
                        "column")
    ssa = []
    for v, (_, n) in zip(values, pairs):
        if v.kind == "tile":
            ssa.append(v.ssa)
        elif dtype == "i32":
            if v.kind == "float":
                raise error("CAKE-D002", "an i32 tile is combined with an integer, not a "
                            "float", n)
            ssa.append(fe._i32(v))
        else:
            ssa.append(fe._f32(v))
    assert shape is not None
    return ssa, shape, dtype


def tile_binop(fe: Any, e: ast.BinOp, lhs: Any, rhs: Any) -> Any:
    """`a OP b` where one side is a register tile (or a TMEM accumulator, read as one) and
    the other a tile or a number (a constant or a runtime scalar)."""
    pairs = [(lhs, e.left.span), (rhs, e.right.span)]
    if e.op in TILE_CMPS:
        ssa, shape, _ = _operands(fe, f"comparison `{e.op}`", pairs, ("f32", "i32"), e.span)
        return _result(fe, cake.TileCmpOp.build(
            operands=ssa, properties={"predicate": string_attr(TILE_CMPS[e.op])},
            result_types=[tile_type(shape, cake.dtype_attr("i1"))]), e.span)
    if e.op not in TILE_OPS:
        raise error("CAKE-T007", f"operator `{e.op}` is not defined on register tiles", e.span,
                    help="tiles support `+ - * /` and comparisons (with numbers or other "
                    "tiles)")
    return binary(fe, TILE_OPS[e.op], f"operator `{e.op}`", pairs, e.span)


def predicate_binop(fe: Any, e: ast.BinOp, lhs: Any, rhs: Any) -> Value:
    """`p and q`, `p or q` of predicate tiles (masks combined elementwise)."""
    for v, n in ((lhs, e.left), (rhs, e.right)):
        if v.kind != "tile" or _dtype(v) != "i1":
            raise error("CAKE-T007", f"`{e.op}` combines predicate tiles (comparisons); this "
                        f"operand is {describe(v) if v.kind != 'tile' else 'an ' + _dtype(v) + ' tile'}",
                        n.span, notes=decl_note(v))
    shape = broadcast(_shape(lhs), _shape(rhs))
    if shape is None:
        raise error("CAKE-T007", f"tile shapes {_show(_shape(lhs))} and {_show(_shape(rhs))} "
                    "do not broadcast", e.span)
    return _result(fe, cake.TileBinaryOp.build(operands=[lhs.ssa, rhs.ssa], properties={
        "kind": string_attr(e.op)}, result_types=[tile_type(shape, cake.dtype_attr("i1"))]),
        e.span)


def binary(fe: Any, kind: str, what: str, pairs: list[tuple[Any, Span]], span: Span) -> Value:
    """Arithmetic on f32 tiles; `lm.min`/`lm.max` also of i32 tiles (index tiles, argmin
    results), with i32 scalars."""
    dtypes = ("f32", "i32") if kind in ("min", "max") else ("f32",)
    ssa, shape, dtype = _operands(fe, what, pairs, dtypes, span)
    return _result(fe, cake.TileBinaryOp.build(operands=ssa, properties={
        "kind": string_attr(kind)}, result_types=[tile_type(shape, cake.dtype_attr(dtype))]),
        span)


def unary(fe: Any, kind: str, what: str, v: Any, span: Span, arg_span: Span) -> Value:
    """`lm.KIND(x)` or `-x` of an f32 tile."""
    if v.kind not in ("tile", "tmem"):
        raise error("CAKE-T007", f"{what} expects a register tile, got {describe(v)}",
                    arg_span, notes=decl_note(v), help="scalars are computed on the host")
    (x,), shape, _ = _operands(fe, what, [(v, arg_span)], ("f32",), span)
    return _result(fe, cake.TileUnaryOp.build(operands=[x], properties={
        "kind": string_attr(kind)}, result_types=[tile_type(shape, f32)]), span)


def _build_unary(kind: str):
    def build(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
        return unary(fe, kind, f"`lm.{kind}`", b["x"], e.span, _arg_span(e, 0, "x"))
    return build


def _build_extremum(kind: str):
    """`lm.max(a, b)` / `lm.min(a, b)`: integers (scalar arithmetic) or tiles (elementwise)."""
    def build(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
        a, c = b["a"], b["b"]
        if {"tile", "tmem"} & {a.kind, c.kind}:
            return binary(fe, kind, f"`lm.{kind}`", [(a, _arg_span(e, 0, "a")),
                                                     (c, _arg_span(e, 1, "b"))], e.span)
        return fe.int_extremum(kind, e, a, c)
    return build


def _build_where(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    pred, spans = b["pred"], [_arg_span(e, i, n) for i, n in enumerate(("pred", "a", "b"))]
    if pred.kind != "tile" or _dtype(pred) != "i1":
        raise error("CAKE-T007", f"`lm.where` selects with a predicate tile (a tile "
                    f"comparison such as `col > row`), got "
                    f"{describe(pred) if pred.kind != 'tile' else 'an ' + _dtype(pred) + ' tile'}",
                    spans[0], notes=decl_note(pred))
    ssa, shape, dtype = _operands(fe, "`lm.where`", [(b["a"], spans[1]), (b["b"], spans[2])],
                                  ("f32", "i32"), e.span)
    if not {"tile", "tmem"} & {b["a"].kind, b["b"].kind}:
        shape = _shape(pred)  # two numbers: the predicate's shape
    shape = broadcast(shape, _shape(pred))
    if shape is None:
        raise error("CAKE-T007", f"the predicate's shape {_show(_shape(pred))} does not "
                    "broadcast with the values'", spans[0])
    return _result(fe, cake.TileSelectOp.build(
        operands=[pred.ssa, *ssa], result_types=[tile_type(shape, cake.dtype_attr(dtype))]),
        e.span)


def _build_any(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`if lm.any(pred):` — true in every lane of a warp where `pred` holds at any element
    the warp holds; a value that differs between warps, so it is only ever that condition."""
    if fe.any_condition is not e:
        raise error("CAKE-T011", "`lm.any(...)` differs between the warps of a role, so it may "
                    "only be the whole condition of an `if`", e.span,
                    help="write `if lm.any(pred):` and keep the branch's work inside it")
    pred = b["pred"]
    if pred.kind != "tile" or _dtype(pred) != "i1":
        raise error("CAKE-T007", f"`lm.any` reduces a predicate tile (a tile comparison such "
                    f"as `m_new > m + 8.0`), got "
                    f"{describe(pred) if pred.kind != 'tile' else 'an ' + _dtype(pred) + ' tile'}",
                    _arg_span(e, 0, "pred"), notes=decl_note(pred))
    op = cake.TileAnyOp.build(operands=[pred.ssa], result_types=[i1])
    fe._add(op, e.span)
    return Value("bool", e.span, ssa=op.result)


def _build_index(axis: int):
    """`lm.row_index(t, base=)` → (M, 1), `lm.col_index(t, base=)` → (1, N), i32."""
    def build(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
        t = b["tile"]
        if t.kind not in ("tile", "tmem"):
            raise error("CAKE-T007", f"index tiles are of a register tile or TMEM accumulator, "
                        f"not {describe(t)}", _arg_span(e, 0, "tile"))
        shape = _shape(t)
        if len(shape) != 2:
            raise error("CAKE-T007", f"index tiles are of 2-D tiles; this one has shape "
                        f"{_show(shape)}", _arg_span(e, 0, "tile"))
        out = (shape[0], 1) if axis == 0 else (1, shape[1])
        return _result(fe, cake.TileIndexOp.build(
            operands=[fe._i32(b["base"])], properties={"axis": integer_attr(axis, i64)},
            result_types=[tile_type(out, i32)]), e.span)
    return build


def _build_reduce(kind: str):
    """`t.KIND(axis=1)`: each row of an (M, N) f32 tile to an (M, 1) tile; `axis=0`: each
    column to a (1, N) tile (sum, max, min). A TMEM accumulator is read first, as in tile
    arithmetic."""
    def build(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
        if recv.kind == "tmem":
            recv = _read_tmem(fe, recv, e.span)
        axis = b["axis"].const
        if axis not in (0, 1) or (axis == 0 and kind.startswith("arg")):
            raise error("CAKE-T010", f"`.{kind}` reduces along axis=1 (each row)"
                        f"{' or axis=0 (each column)' if not kind.startswith('arg') else ''}, "
                        f"got axis={axis}", b["axis"].span,
                        help="`argmax`/`argmin` run along each row: load or compute the tile "
                        "with the reduced dimension as its columns" if kind.startswith("arg")
                        and axis == 0 else None)
        if _dtype(recv) != "f32":
            raise error("CAKE-D002", f"`.{kind}` reduces an f32 tile; this one is "
                        f"{_dtype(recv)}", e.span, notes=decl_note(recv))
        rows, cols = _shape(recv)
        dtype = i32 if kind.startswith("arg") else f32
        return _result(fe, cake.TileReduceOp.build(
            operands=[recv.ssa], properties={"kind": string_attr(kind),
                                             "axis": integer_attr(axis, i64)},
            result_types=[tile_type((rows, 1) if axis == 1 else (1, cols), dtype)]), e.span)
    return build


def assign_regs(fe: Any, target: ast.Name, dest: Any, v: Any, span: Span) -> None:
    """`r = value` for an `lm.regs` tile `r`: its new contents, same shape and dtype, in
    the registers of the role that owns it."""
    name = target.id
    if v.kind == "tmem":
        v = _read_tmem(fe, v, span)
    _owned_here(fe, dest, target.span, name)
    if _dtype(dest) not in _ASSIGNED:
        raise error("CAKE-D002", f"`{name}` is an MMA operand-typed {_dtype(dest)} tile; "
                    "assigned register tiles are " + ", ".join(_ASSIGNED), span,
                    notes=decl_note(dest))
    if _dtype(dest) in ("bf16", "f16") and (v.kind != "tile" or len(_shape(dest)) != 2
                                           or 1 in _shape(dest)):
        raise error("CAKE-T007" if v.kind == "tile" else "CAKE-D002",
                    f"`{name}` is a {_show(_shape(dest))} {_dtype(dest)} tile: 16-bit register "
                    "tiles are (M, N) tiles assigned a converted tile expression", span,
                    notes=decl_note(dest),
                    help=f"assign `(...).to(lm.{_dtype(dest)})` of an (M, N) tile")
    if v.kind in ("float", "int"):  # fill every element
        if v.kind == "float" and _dtype(dest) == "i32":
            raise error("CAKE-D002", f"`{name}` is an i32 tile; it can be filled with an "
                        "integer, not a float", span, notes=decl_note(dest))
        scalar = fe._i32(v) if _dtype(dest) == "i32" else fe._f32(v)
        fe._add(cake.TileAssignOp.build(operands=[dest.ssa, scalar]), target.span)
        return
    if v.kind != "tile":
        raise error("CAKE-T007", f"`{name}` is a register tile; it can be assigned a tile or a "
                    f"number, not {describe(v)}", span, notes=decl_note(dest))
    if _dtype(v) != _dtype(dest) or _shape(v) != _shape(dest):
        raise error("CAKE-T007" if _dtype(v) == _dtype(dest) else "CAKE-D002",
                    f"`{name}` is a {_show(_shape(dest))} {_dtype(dest)} tile; this value is "
                    f"{_show(_shape(v))} {_dtype(v)}", span, notes=decl_note(dest),
                    help="a register tile keeps its declared shape and dtype")
    fe._add(cake.TileAssignOp.build(operands=[dest.ssa, v.ssa]), target.span)


#: dtypes of `lm.regs` tiles a program assigns: f32 and i32 computed values, and 16-bit tiles
#: (converted with `.to`) held packed two per register, e.g. a register-A MMA operand kept
#: across iterations.
_ASSIGNED = ("f32", "i32", "bf16", "f16")


def _owned_here(fe: Any, v: Any, span: Span, name: str) -> None:
    """An `lm.regs` tile is written only inside `with ROLE:` of the role that owns it."""
    role = v.ssa.owner.role.owner
    here = fe.in_role.info.get("name") if fe.in_role is not None else None
    if here is None:
        raise error("CAKE-T011", f"register tile `{name}` is written inside a `with ROLE:` "
                    "block", span, help=f"do this inside `with {role.sym_name.data}:`")
    if isinstance(role, cake.RoleOp) and role.sym_name.data != here:
        raise error("CAKE-S017", f"role {here} updates register tile `{name}`, which lives in "
                    f"the registers of role {role.sym_name.data}", span,
                    notes=[Note(fe.spans[v.ssa.owner], f"`{name}` is declared here for role "
                                f"{role.sym_name.data}")],
                    help=f"do this inside `with {role.sym_name.data}:`")


def _read_tmem(fe: Any, v: Any, span: Span) -> Any:
    """A TMEM accumulator named in tile arithmetic is read into the role's registers where
    the expression names it, exactly as `acc.to(lm.f32)` (cake.convert, tcgen05.ld), so the
    verifiers check that read like any other: lane quarters (H015), a wait after the MMA."""
    if fe.in_role is None:
        raise error("CAKE-T011", f"reading TMEM region `{v.info.get('name')}` in tile "
                    "arithmetic must happen inside a `with ROLE:` block", span,
                    help="compute the expression inside the role that reads the accumulator")
    op = cake.ConvertOp.build(operands=[v.ssa], result_types=[tile_type(_shape(v), f32)])
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
    """`T.load(coords=, shape=, dtype=, other=)`: a (1, L) / (L, 1) vector along T's last
    dimension, or an (M, N) block of T's last two dimensions (the other coordinates are
    element indices), in the role's register layout; elements outside T read `other`."""
    coords = _check_coords(recv, b)
    shape, dtype = b["shape"].const, b["dtype"].const
    matrix = len(shape) == 2 and not _is_vector(shape)
    if len(shape) != 2:
        raise error("CAKE-T007", f"`load` reads a 2-D tile, shape (1, L), (L, 1) or (M, N); "
                    f"got {_show(shape)}", b["shape"].span)
    if matrix and len(coords) < 2:
        raise error("CAKE-T007", f"`load` of a {_show(shape)} tile reads the last two "
                    f"dimensions of a tensor of rank ≥ 2; `{recv.info['name']}` has rank "
                    f"{len(coords)}", b["shape"].span, notes=[Note(recv.span, "declared here")],
                    help="load a vector, shape (1, L) or (L, 1), from a rank-1 tensor")
    if dtype not in _LOADED:
        raise error("CAKE-D002", f"`load` reads {', '.join(_LOADED)} tiles, not {dtype}",
                    b["dtype"].span)
    fe.note_tensor_dtype(recv, dtype, e.span)
    op = cake.TileLoadOp.build(
        operands=[recv.ssa, [fe._i32(c) for c in coords]],
        properties={"other": FloatAttr(float(b["other"].const), f32)},
        result_types=[tile_type(shape, cake.dtype_attr(dtype))])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": dtype})


#: dtypes a tile is loaded as (16-bit ones are widened to f32 as they are read:
#: `R.load(..., dtype=lm.bf16).to(lm.f32)`).
_LOADED = ("f32", "i32", "bf16", "f16")


def _build_store(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`T.store(tile, coords=)`: a vector as a run along T's last dimension, an (M, N) tile
    as the tile of T's last two dimensions at `coords`."""
    coords = _check_coords(recv, b)
    value = b["value"]
    shape = _shape(value)
    if len(shape) != 2:
        raise error("CAKE-T007", f"`store` writes an (L, 1) or (1, L) vector or an (M, N) "
                    f"tile; this one is {_show(shape)}", b["value"].span, notes=decl_note(value))
    if shape[1] > 1 and shape[0] > 1 and len(coords) < 2:
        raise error("CAKE-T007", f"`store` of a {_show(shape)} tile writes a tile of the last "
                    f"two dimensions of a tensor of rank ≥ 2; `{recv.info['name']}` has rank "
                    f"{len(coords)}", b["value"].span, notes=[Note(recv.span, "declared here")])
    if _dtype(value) not in _STORED:
        raise error("CAKE-D002", f"`store` writes {', '.join(_STORED)} tiles; this one is "
                    f"{_dtype(value)}", b["value"].span, notes=decl_note(value),
                    help="select values with `lm.where(pred, a, b)`")
    fe.note_tensor_dtype(recv, _dtype(value), e.span)
    fe._add(cake.TileStoreOp.build(operands=[recv.ssa, value.ssa,
                                             [fe._i32(c) for c in coords]]), e.span)
    return Value("none", e.span)


#: dtypes a register tile is stored as (`.to(...)` converts to the 16-bit ones).
_STORED = ("f32", "i32", "bf16", "f16")


def _build_split_store(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`T.split_store(partial, coords=, part=, parts=, workspace=W, counters=L, dtype=)`: the
    f32 partial sum of an (M, N) tile of the rank-2 T into W [parts, ≥ rows of T, ≥ cols of
    T] (f32), an arrival on L [≥ tiles of T] (i32); the last arrival writes T as `dtype`."""
    coords = _check_coords(recv, b)
    value, work, count = b["value"], b["workspace"], b["counters"]
    shape, dtype = _shape(value), b["dtype"].const
    if len(shape) != 2 or 1 in shape:
        raise error("CAKE-T007", f"`split_store` reduces an (M, N) tile; this one is "
                    f"{_show(shape)}", value.span, notes=decl_note(value))
    if len(coords) != 2:
        raise error("CAKE-T007", f"`split_store` writes a tile of a rank-2 tensor; "
                    f"`{recv.info['name']}` has rank {len(coords)}", e.span,
                    notes=[Note(recv.span, "declared here")])
    if _dtype(value) != "f32":
        raise error("CAKE-D002", f"`split_store` adds f32 partial sums; this tile is "
                    f"{_dtype(value)}", value.span, notes=decl_note(value),
                    help="pass the f32 accumulator; `dtype=` converts the sum")
    if dtype not in ("f32", "bf16", "f16"):
        raise error("CAKE-D002", f"`split_store` stores the sum as f32, bf16 or f16, not "
                    f"{dtype}", b["dtype"].span)
    for arg, rank, what in ((work, 3, "[parts, rows, cols] of f32 partial sums"),
                            (count, 1, "one i32 arrival counter per tile")):
        if arg.info["rank"] != rank:
            raise error("CAKE-T007", f"`{arg.info['name']}` has rank {arg.info['rank']}, but "
                        f"a split_store's {'workspace' if rank == 3 else 'counters'} is rank "
                        f"{rank}: {what}", e.span, notes=[Note(arg.span, "declared here")])
    part, parts = b["part"], b["parts"]
    if part.is_const and parts.is_const and part.const >= parts.const:
        raise error("CAKE-T010", f"`part` is {part.const}, but a tile split in {parts.const} "
                    f"parts has parts 0..{parts.const - 1}", part.span,
                    help="the part is this CTA's share of the tile's K range, in [0, parts)")
    transpose = b["transpose"]
    if not transpose.is_const:
        raise error("CAKE-T010", "`transpose` must be a constant (True or False): it decides "
                    "the layout of the stores", transpose.span)
    # Output, workspace and counters have ranks 2, 3 and 1: three different tensors.
    fe.note_tensor_dtype(recv, dtype, e.span)
    fe.note_tensor_dtype(work, "f32", e.span)
    fe.note_tensor_dtype(count, "i32", e.span)
    fe._add(cake.SplitStoreOp.build(operands=[
        recv.ssa, value.ssa, work.ssa, count.ssa, fe._i32(part), fe._i32(parts),
        [fe._i32(c) for c in coords]],
        properties={"transpose": UnitAttr()} if transpose.const else {}), e.span)
    return Value("none", e.span)


def _build_stage_load(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`view[s].load()`: the stage's (1, L) or (L, 1) f32/i32 vector, or its (M, N) bf16/f16
    (packed) or f32 tile, in registers."""
    view = recv.info["view"]
    shape, dtype = tuple(view.info["shape"]), view.info["dtype"]
    name = view.info.get("name", "view")
    if len(shape) != 2:
        raise error("CAKE-T007", f"`load` reads a 2-D stage; `{name}` is {_show(shape)}",
                    e.span, notes=[Note(view.span, f"`{name}` is declared here")],
                    help="`lm.sum_sq` reduces the rows of other stages")
    vector = _is_vector(shape)
    allowed = ("f32", "i32") if vector else ("bf16", "f16", "f32")
    if dtype not in allowed:
        what = "vector stages ((1, L) or (L, 1))" if vector else "(M, N) tile stages"
        kinds = ", ".join(allowed[:-1]) + " or " + allowed[-1]
        raise error("CAKE-D002", f"`load` reads {what} of {kinds}; `{name}` is "
                    f"{dtype}", e.span, notes=[Note(view.span, f"`{name}` is declared here")],
                    help=None if vector else "an (M, N) stage is read as 16-bit pairs "
                    "(convert with `.to(lm.f32)` for arithmetic) or as f32; other tiles are MMA "
                    "operands")
    op = cake.StageLoadOp.build(operands=[recv.ssa],
                                result_types=[tile_type(shape, cake.dtype_attr(dtype))])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": shape, "dtype": dtype})


def _build_stage_store(fe: Any, e: ast.Call, b: dict[str, Any], recv: Any) -> Any:
    """`view[s].store(tile)`: a register tile written into one stage of a view. Its shape
    and dtype are checked against the view's by verify-consistency (CAKE-D010), with the
    other producer/consumer agreements."""
    value = b["value"]
    if len(_shape(value)) != 2:
        raise error("CAKE-T007", f"`store` writes a 2-D register tile into a stage; this one "
                    f"has shape {_show(_shape(value))}", b["value"].span, notes=decl_note(value))
    fe._add(cake.StageStoreOp.build(operands=[recv.ssa, value.ssa]), e.span)
    return Value("none", e.span)


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
    op = cake.SumSqOp.build(operands=[source.ssa], properties={"axis": integer_attr(1, i64)},
                            result_types=[tile_type(shape, f32)])
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
        properties={"axis": integer_attr(1, i64)}), e.span)
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
    _owned_here(fe, v, span, name)
    if _dtype(v) != dtype:
        raise error("CAKE-D002", f"`{name}` holds {_dtype(v)}, but `lm.argmin` keeps its "
                    f"{'minima' if arg == 'value' else 'indices'} in {dtype}", span,
                    notes=decl_note(v))
    if _shape(v) != (rows, 1):
        raise error("CAKE-T007", f"`{name}` has shape {_show(_shape(v))}, but the "
                    f"{_show(_shape(source))} tile it reduces needs ({rows}, 1): one value per "
                    "row", span, notes=decl_note(v))


TILE_BUILDERS = {
    "tensor.load": _build_load, "tensor.store": _build_store,
    "tensor.split_store": _build_split_store, "stage.load": _build_stage_load,
    "stage.store": _build_stage_store,
    "sum_sq": _build_sum_sq,
    "argmin": _build_argmin,
    "max": _build_extremum("max"), "min": _build_extremum("min"), "where": _build_where,
    "any": _build_any,
    "row_index": _build_index(0), "col_index": _build_index(1),
    **{k: _build_unary(k) for k in cake.TILE_UNARY},
    **{f"{kind}.{k}": _build_reduce(k) for k in cake.TILE_REDUCE for kind in ("tile", "tmem")},
}

# Last, so that importing either module first works: frontend imports TILE_BUILDERS from here.
