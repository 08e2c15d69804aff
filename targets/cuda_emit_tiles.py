"""sm_90a lowering of register-tile values: vector loads and stores, broadcasting
arithmetic, `lm.sum_sq` and `lm.argmin` (device helpers in cuda_emit_tiles.cuh).

Every tile of a role lives in the wgmma accumulator layout of that role's warpgroups, so
an accumulator, the (M, 1) vectors of its rows and the (1, N) vectors of its columns line up
element for element in each thread's registers (the layout is spelled out at the top of
cuda_emit_tiles.cuh). Arithmetic emits no code of its own: the op that consumes a tile
expression (`lm.argmin`, `T.store`) evaluates it per register, so `c_sq - 2.0 * acc` costs
one FMA per element and nothing is materialised. `evaluate` (constants and arithmetic, given
a target's layout of the leaves) is shared with the sm_100a lowering, cuda_emit_tiles_sm100.py.

A running argmin keeps per-thread partial results (each lane of a row's quad sees a
quarter of the columns); reading the tiles merges the quad first, which is idempotent, so
every read is correct wherever it stands relative to the updates.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ArgminOp, ForOp, IfOp, MmaOp, RegsOp, StageLoadOp, StageOp, SumSqOp, TileBinaryOp,
    TileLoadOp,
    TileStoreOp, ViewOp, dtype_name,
)
from cakec.targets.sku import SWIZZLE_SPAN, WARPGROUP_WARPS

_FRAG_ROWS = 64
_CTYPE = {"f32": "float", "i32": "i32"}
_BINARY = {"add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}"}
#: C loop variables of the per-register loops: fragment, column octet, column, row half.
_F, _J, _E, _H = "cake_f", "cake_j", "cake_e", "cake_h"
#: A target's tile layout for `evaluate`: the C expression of one element of a leaf tile.
Leaf = Callable[["KernelEmitter", SSAValue], str]


# ---- layout ---------------------------------------------------------------------------------


def _warpgroups(role: _Role) -> int:
    """Warpgroups of a role whose warps are whole, aligned warpgroups (the layout's premise)."""
    g = len(role.warps) // WARPGROUP_WARPS
    first = role.warps[0]
    if (first % WARPGROUP_WARPS or role.warps != list(range(first, first + g * WARPGROUP_WARPS))
            or g == 0):
        raise Unsupported(f"register tiles in role `{role.name}`, whose warps are not whole "
                          "warpgroups")
    return g


def _frags(role: _Role, rows: int) -> int:
    """64-row fragments of an M-row tile per warpgroup of the role."""
    g = _warpgroups(role)
    if rows % (g * _FRAG_ROWS):
        raise Unsupported(f"a {rows}-row register tile in role `{role.name}` of {g} "
                          f"warpgroup(s) (rows must be a multiple of {g * _FRAG_ROWS})")
    return rows // g // _FRAG_ROWS


def _wg_row0(em: KernelEmitter, rows: int) -> str:
    """First tile row of this thread's warpgroup."""
    role = _role(em)
    g = _warpgroups(role)
    if g == 1:
        return "0"
    return f"(i32)((cake_warp - {role.first}u) / 4u) * {rows // g}"


def _role(em: KernelEmitter) -> _Role:
    if em.role is None:
        raise Unsupported("a register tile outside a role")
    return em.role


def _dims(v: SSAValue) -> tuple[int, int]:
    dims = v.type.dims()  # type: ignore[attr-defined]
    if len(dims) != 2:
        raise Unsupported(f"a rank-{len(dims)} register tile")
    return dims[0], dims[1]


# ---- declarations ---------------------------------------------------------------------------


def declare_tiles(em: KernelEmitter, role: _Role, ops: list[Operation]) -> None:
    """`lm.regs` vectors that `lm.argmin` keeps its running rows in, declared with the role."""
    for op in ops:
        if isinstance(op, ArgminOp):
            em.try_lower(op, lambda op=op: _declare_running(em, role, op))


def _declare_running(em: KernelEmitter, role: _Role, op: ArgminOp) -> None:
    for v in (op.value, op.index):
        regs = v.owner
        if v in em.values or not isinstance(regs, RegsOp):
            continue
        rows, cols = _dims(v)
        frags = _frags(role, rows)
        var = em.names.fresh(regs.sym_name.data)
        em.values[v] = var
        em.source_comment(regs)
        em.line(f"{_ctype(v)} {var}[{frags}][2];  // ({rows}, {cols}): rows 64 f + 16 w + l/4 "
                "+ 8 h of each warpgroup's block")


def _ctype(v: SSAValue) -> str:
    name = dtype_name(v.type.element_type)  # type: ignore[attr-defined]
    if name not in _CTYPE:
        raise Unsupported(f"a {name} register tile")
    return _CTYPE[name]


# ---- element expressions ----------------------------------------------------------------------


def element(em: KernelEmitter, v: SSAValue) -> str:
    """C expression for the element of tile `v` in the register at (cake_f, cake_j, cake_e,
    cake_h) of the current loops; vectors broadcast along their unit dimension."""
    return evaluate(em, v, _register)


def evaluate(em: KernelEmitter, v: SSAValue, leaf: Leaf) -> str:
    """C expression for one element of the tile expression `v`: constants and arithmetic
    here (target-neutral), every other tile through `leaf`, the target's register layout."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr):
        return _float(owner.value.value.data)
    if isinstance(owner, TileBinaryOp):
        return _fused(em, owner, leaf) or "({})".format(_BINARY[owner.kind.data].format(
            evaluate(em, owner.lhs, leaf), evaluate(em, owner.rhs, leaf)))
    return leaf(em, v)


def _register(em: KernelEmitter, v: SSAValue) -> str:
    """A tile's element in the wgmma layout (the sm_90a leaf of `evaluate`)."""
    owner = v.owner
    role = _role(em)
    if v in role.accs:
        return f"{role.accs[v].var}[{_F}][4 * {_J} + 2 * {_H} + {_E}]"
    if v not in em.values:
        raise em.undefined(v, f"a tile defined by `{getattr(owner, 'name', 'a block')}` in "
                           "tile arithmetic")
    rows, cols = _dims(v)
    if cols == 1:
        return f"{em.values[v]}[{_F}][{_H}]"
    if rows == 1:
        return f"{em.values[v]}[2 * {_J} + {_E}]"
    raise Unsupported(f"a ({rows}, {cols}) tile that is not an MMA accumulator")


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
            return f"fmaf({sign}{_paren(y)}, {z}, {evaluate(em, other, leaf)})"
    return None


def _float(x: float) -> str:
    if math.isinf(x):
        return ("-" if x < 0 else "") + "__int_as_float(0x7f800000)"
    return f"{x!r}f"


def _leaves(v: SSAValue) -> list[SSAValue]:
    owner = v.owner
    if isinstance(owner, TileBinaryOp):
        return _leaves(owner.lhs) + _leaves(owner.rhs)
    return [v]


def _loops(em: KernelEmitter, frags: int, cols: int | None) -> int:
    """Open the unrolled per-register loops (rows only when cols is None); returns how many
    to close."""
    loops = [(_F, frags)] + ([(_J, cols // 8), (_E, 2)] if cols else []) + [(_H, 2)]
    for var, n in loops:
        em.line("#pragma unroll")
        em.line(f"for (int {var} = 0; {var} < {n}; ++{var}) {{")
        em.depth += 1
    return len(loops)


def _close(em: KernelEmitter, n: int) -> None:
    for _ in range(n):
        em.depth -= 1
        em.line("}")


def _retire_mma(em: KernelEmitter, reader: Operation, v: SSAValue) -> None:
    """Reading an accumulator waits for the wgmma group that wrote it, then pins the
    registers after the wait. Groups complete in issue order, so `wait_group n` suffices
    when n groups were surely issued after it (see _groups_after): those n keep the tensor
    cores busy under this epilogue."""
    role = em.role
    leaves = {leaf for leaf in _leaves(v) if role is not None and leaf in role.accs}
    if role is None or not leaves:
        return
    pending = min(_groups_after(em, reader, leaf) for leaf in leaves)
    em.line(f"cake_wgmma_wait<{pending}>();")
    for acc in {role.accs[leaf].var: role.accs[leaf] for leaf in leaves}.values():
        for f in range(acc.frags):
            em.line(f"cake_fence_regs({acc.var}[{f}]);")


def _groups_after(em: KernelEmitter, reader: Operation, acc: SSAValue) -> int:
    """wgmma groups (one per MMA) issued in straight-line code between the newest MMA into
    `acc` and `reader`, walking back through the reader's block. The walk also stops at the
    start of the block or at a loop or branch (its groups, if any, were issued earlier): the
    MMA into `acc` is older still, so the groups counted so far are a sound bound either way
    (the safety gate rejects reading an accumulator no MMA has written). An `if` whose MMAs
    are predicated (guarded_mmas) commits one group per MMA either way, so it is counted."""
    groups = 0
    op = reader.prev_op
    while op is not None:
        mmas = [op] if isinstance(op, MmaOp) else (
            guarded_mmas(em, op) if isinstance(op, IfOp) else [])
        if isinstance(op, ForOp) or (isinstance(op, IfOp) and not mmas):
            break
        for mma in reversed(mmas):  # predicated wgmmas commit a group whether they run or not
            if mma.acc == acc:
                return groups
            groups += 1
        op = op.prev_op
    return groups


def _merge_running(em: KernelEmitter, v: SSAValue) -> None:
    """Merge the quads of every running argmin pair that the expression reads, once per
    update: a second merge of merged lanes is redundant, and on the H200 (NVRTC 13.0) it
    swapped the value and index registers (distilled: test/distilled/kmeans_double_merge)."""
    for leaf in _leaves(v):
        for use in leaf.uses:
            op = use.operation
            if (isinstance(op, ArgminOp) and op.value not in em.merged
                    and leaf in (op.value, op.index)):
                em.merged.add(op.value)
                frags = _frags(_role(em), _dims(op.value)[0])
                em.line(f"cake_argmin_quad_merge<{frags}>({em.values[op.value]}, "
                        f"{em.values[op.index]});")


# ---- lowerings ----------------------------------------------------------------------------------


def tile_binary(em: KernelEmitter, op: TileBinaryOp) -> None:
    """Nothing to emit: the consumer evaluates the expression per register."""
    if not all(isinstance(u.operation, (TileBinaryOp, ArgminOp, TileStoreOp))
               for u in op.result.uses):
        raise Unsupported("tile arithmetic consumed other than by `lm.argmin` or `store`")


def _coords(em: KernelEmitter, op: TileLoadOp | TileStoreOp, run: int) -> str:
    """`{c0, ..., cR-1 * run}`: element coordinates (the last one is the run's start)."""
    cs = [em.val(c) for c in op.coords]
    cs[-1] = _scaled(cs[-1], run)
    return "{" + ", ".join(cs) + "}"


def load_other(op: TileLoadOp, ctype: str) -> str:
    """The value a vector load reads outside its tensor, as a C literal of type `ctype`."""
    return _float(op.other.value.data) if ctype == "float" else str(int(op.other.value.data))


def declare_row_vector(em: KernelEmitter, op: TileLoadOp | StageLoadOp, per_thread: int,
                       layout: str) -> tuple[str, str, int]:
    """Declare the register array a (1, N) vector load fills, N / `per_thread` elements per
    thread, with the layout's comment; returns (var, ctype, N). Other shapes are not
    lowered."""
    rows, cols = _dims(op.result)
    if rows != 1 or cols % 8:
        raise Unsupported(f"`load` of a ({rows}, {cols}) vector (one value per column, "
                          "N a multiple of 8, is supported)")
    ctype = _ctype(op.result)
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
        em.line(f"const i32 cake_c[{rank}] = {_coords(em, op, cols)};")
        em.line(f"{helper}<{cols}, {rank}, {ctype}>({var}, {em.val(op.tensor)}, cake_c, "
                f"({ctype}){load_other(op, ctype)});")


#: The wgmma layout of a (1, N) vector: columns 8 j + 2 (l % 4) + e, N / 4 per thread.
_ROW_VECTOR = (4, "columns 8 j + 2 (l % 4) + e")


def tile_load(em: KernelEmitter, op: TileLoadOp) -> None:
    load_row_vector(em, op, "cake_load_cols", *_ROW_VECTOR)


def stage_load(em: KernelEmitter, op: StageLoadOp) -> None:
    """A (1, N) stage into each thread's columns of the layout, straight from SMEM (the
    lanes of a quad read neighbouring pairs; every warp reads the same 4 N bytes)."""
    var, _, cols = declare_row_vector(em, op, *_ROW_VECTOR)
    em.line(f"cake_load_cols_smem<{cols}>({var}, {em.val(op.source)});")


def tile_store(em: KernelEmitter, op: TileStoreOp) -> None:
    rows, _ = _dims(op.value)
    role = _role(em)
    frags = _frags(role, rows)
    ctype = _ctype(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    _retire_mma(em, op, op.value)
    _merge_running(em, op.value)
    with em.block():
        em.line(f"{ctype} cake_v[{frags}][2];")
        n = _loops(em, frags, None)
        em.line(f"cake_v[{_F}][{_H}] = {element(em, op.value)};")
        _close(em, n)
        em.line(f"const i32 cake_c[{rank}] = {_coords(em, op, rows)};")
        em.line(f"cake_store_rows<{frags}, {rank}, {ctype}>(cake_v, {em.val(op.tensor)}, cake_c, "
                f"{_wg_row0(em, rows)});")


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


def sum_sq(em: KernelEmitter, op: SumSqOp) -> None:
    rows, atoms, atom_bytes, pitch, swz = sum_sq_layout(em, op)
    frags = _frags(_role(em), rows)
    var = em.names.fresh(op.result.name_hint or "sum_sq")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"float {var}[{frags}][2];  // ({rows}, 1)")
    em.line(f"cake_sum_sq_bf16<{frags}, {atoms}u, {atom_bytes}u, {pitch}u, {swz}u>({var}, "
            f"{em.val(op.source)}, {_wg_row0(em, rows)});")


def argmin(em: KernelEmitter, op: ArgminOp) -> None:
    """Per thread, two chains per row (even and odd columns: the compare/select latency of
    one overlaps the other's), each in ascending column order with a strict `<`, so each
    keeps the lowest index among its equal minima; merging the chains breaks ties by index,
    merging into the running pair (earlier tiles, lower indices) is strict, and the quad
    merge keeps the rule across lanes. NaN scores never win."""
    rows, cols = _dims(op.source)
    if cols % 8:
        raise Unsupported(f"`lm.argmin` over {cols} columns (a multiple of 8 is needed)")
    frags = _frags(_role(em), rows)
    best, index = em.values.get(op.value), em.values.get(op.index)
    if best is None or index is None:
        raise Unsupported("`lm.argmin` into tiles that are not `lm.regs` of its role")
    em.source_comment(op)
    _retire_mma(em, op, op.source)
    em.merged.discard(op.value)  # new partial results: the next reader merges again
    init = em.val(op.init)
    with em.block():
        if init != "false":
            head = "" if init == "true" else f"if ({init}) "
            em.line(f"{head}for (int {_F} = 0; {_F} < {frags}; ++{_F}) "
                    f"for (int {_H} = 0; {_H} < 2; ++{_H}) {{ {best}[{_F}][{_H}] = "
                    f"__int_as_float(0x7f800000); {index}[{_F}][{_H}] = 0; }}")
        em.line(f"float cake_m[{frags}][2][2];  // [f][h][e]: each chain's minimum ...")
        em.line(f"i32 cake_j8[{frags}][2][2];  // ... and its column octet, 8 j")
        em.line(f"for (int {_F} = 0; {_F} < {frags}; ++{_F}) for (int {_H} = 0; {_H} < 2; "
                f"++{_H}) for (int {_E} = 0; {_E} < 2; ++{_E}) {{ cake_m[{_F}][{_H}][{_E}] = "
                f"__int_as_float(0x7f800000); cake_j8[{_F}][{_H}][{_E}] = 0; }}")
        n = _loops(em, frags, cols)
        em.line(f"const float cake_s = {element(em, op.source)};")
        em.line(f"const bool cake_p = cake_s < cake_m[{_F}][{_H}][{_E}];")
        em.line(f"cake_m[{_F}][{_H}][{_E}] = cake_p ? cake_s : cake_m[{_F}][{_H}][{_E}];")
        em.line(f"cake_j8[{_F}][{_H}][{_E}] = cake_p ? 8 * {_J} : cake_j8[{_F}][{_H}][{_E}];")
        _close(em, n)
        em.line(f"cake_argmin_chains<{frags}>({best}, {index}, cake_m, cake_j8, "
                f"{_paren(em.val(op.base))} + 2 * (i32)(cake_lane_id() % 4u));")


def register(lowerings: dict, headers: dict) -> None:
    """Add these lowerings and their device helpers to cuda_emit's sm_90a tables."""
    lowerings["sm_90a"].update({
        TileBinaryOp: tile_binary, TileLoadOp: tile_load, TileStoreOp: tile_store,
        StageLoadOp: stage_load, SumSqOp: sum_sq, ArgminOp: argmin,
    })
    headers["sm_90a"] = (*headers["sm_90a"], "cuda_emit_tiles.cuh")


# Last, so that importing either module first works: cuda_emit calls register() on import.
from cakec.targets.cuda_emit import (  # noqa: E402
    KernelEmitter, Unsupported, _paren, _Role, _scaled, guarded_mmas,
)
