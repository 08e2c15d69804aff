"""sm_90a lowering of register-tile values: vector loads and stores, broadcasting
arithmetic, `lm.sum_sq` and `lm.argmin` (device helpers in tiles.cuh beside it).

Every tile of a role lives in the wgmma accumulator layout of that role's warpgroups, so
an accumulator, the (M, 1) vectors of its rows and the (1, N) vectors of its columns line up
element for element in each thread's registers (the layout is spelled out at the top of
tiles.cuh). Tile expressions are evaluated per register by the shared evaluator
(targets/emit/tiles.py), given this layout (`WgmmaLayout`).

A running argmin keeps per-thread partial results (each lane of a row's quad sees a
quarter of the columns); reading the tiles merges the quad first, which is idempotent, so
every read is correct wherever it stands relative to the updates.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ArgminOp, ConvertOp, ForOp, IfOp, MmaOp, RegsOp, SplitStoreOp, StageLoadOp, StageOp,
    StageStoreOp, SumSqOp, TileLoadOp, TileStoreOp,
    PURE_TILE_OPS, TileAssignOp, TileType, TmaStoreOp, ViewOp, dtype_name, per_warp,
    reuse_related, stage_source, tile_leaves,
)
from cakec.targets.emit.cexpr import paren, unparen
from cakec.targets.emit.emitter import KernelEmitter, RoleState
from cakec.targets.emit.tiles import (
    C, CP, R, STAGE_STORE_TRAITS, Layout, column_pair, declare_regs, declare_row_vector,
    load_row_vector, load_tile, load_vector, stage_geometry, store_stage, store_tile,
    sum_sq_layout, tile_coords,
    load_other, tile_ctype, tile_dims, tile_heights, tile_role,
)
from cakec.targets.emit.tiles import element as shared_element
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sku import WARPGROUP_WARPS
from cakec.targets.sm90.lowering import guarded_mmas, if_op, tma_store_sm90

_FRAG_ROWS = 64
#: C loop variables of the per-register loops: fragment, column octet, column, row half.
_F, _J, _E, _H = "cake_f", "cake_j", "cake_e", "cake_h"


# ---- layout ---------------------------------------------------------------------------------


def _warpgroups(role: RoleState) -> int:
    """Warpgroups of a role whose warps are whole, aligned warpgroups (the layout's premise)."""
    g = len(role.warps) // WARPGROUP_WARPS
    first = role.warps[0]
    if (first % WARPGROUP_WARPS or role.warps != list(range(first, first + g * WARPGROUP_WARPS))
            or g == 0):
        raise Unsupported(f"register tiles in role `{role.name}`, whose warps are not whole "
                          "warpgroups")
    return g


def _frags(role: RoleState, rows: int) -> int:
    """64-row fragments of an M-row tile per warpgroup of the role."""
    g = _warpgroups(role)
    if rows % (g * _FRAG_ROWS):
        raise Unsupported(f"a {rows}-row register tile in role `{role.name}` of {g} "
                          f"warpgroup(s) (rows must be a multiple of {g * _FRAG_ROWS})")
    return rows // g // _FRAG_ROWS


def _wg_row0(em: KernelEmitter, rows: int) -> str:
    """First tile row of this thread's warpgroup."""
    role = tile_role(em)
    g = _warpgroups(role)
    if g == 1:
        return "0"
    return f"(i32)((cake_warp - {role.first}u) / 4u) * {rows // g}"






# ---- declarations ---------------------------------------------------------------------------


def declare_tiles(em: KernelEmitter, role: RoleState, ops: list[Operation]) -> None:
    """`lm.regs` vectors that `lm.argmin` keeps its running rows in, declared with the role."""
    for op in ops:
        if isinstance(op, ArgminOp):
            em.try_lower(op, lambda op=op: _declare_running(em, role, op))
    if any(isinstance(op, (TileAssignOp, *PURE_TILE_OPS)) for op in ops):
        em.try_lower(role.op, lambda: declare_regs(em, ops, tile_layout(em)))


def _declare_running(em: KernelEmitter, role: RoleState, op: ArgminOp) -> None:
    for v in (op.value, op.index):
        regs = v.owner
        if v in em.values or not isinstance(regs, RegsOp):
            continue
        rows, cols = tile_dims(v)
        frags = _frags(role, rows)
        var = em.names.fresh(regs.sym_name.data)
        em.values[v] = var
        em.source_comment(regs)
        em.line(f"{tile_ctype(v)} {var}[{frags}][2];  // ({rows}, {cols}): rows 64 f + 16 w + l/4 "
                "+ 8 h of each warpgroup's block")




# ---- the layout ---------------------------------------------------------------------------------


class WgmmaLayout(Layout):
    """Row slot r = 2 f + h (row 64 f + 16 w + l/4 + 8 h of the warpgroup's block), column
    slot c = 2 j + e (column 8 j + 2 (l % 4) + e): the wgmma accumulator's registers."""

    row_lanes = (1, 2)
    col_lanes = (4, 8, 16)

    def __init__(self, em: KernelEmitter, rows: int):
        role = tile_role(em)
        self.frags = _frags(role, rows)
        self.row0 = _wg_row0(em, rows)
        self.warps, self.first = len(role.warps), role.first

    def row_warps(self) -> tuple[int, str]:
        """Every warp of the role holds 16-row slices of every column."""
        return self.warps, f"(i32)(cake_warp - {self.first}u)"

    def row_slots(self, rows: int) -> int:
        return 2 * self.frags

    def col_slots(self, cols: int) -> int:
        return cols // 4

    def decl(self, shape: tuple[int, int]) -> str:
        rows, cols = shape
        if shape == (1, 1):
            return ""
        if cols == 1:
            return f"[{self.frags}][2]"
        return f"[{cols // 4}]" if rows == 1 else f"[{self.frags}][{cols // 2}]"

    def decl_packed(self, shape: tuple[int, int]) -> str:
        rows, cols = shape
        if 1 in shape:
            raise Unsupported(f"a 16-bit ({rows}, {cols}) register vector")
        return f"[{self.frags}][{cols // 4}]"

    def ref_packed(self, var: str, shape: tuple[int, int]) -> str:
        """Column slots 2k, 2k + 1 of row slot r are one u32, as the register-A fragment
        packs them."""
        return f"{var}[{R} / 2][2 * ({C} / 2) + {R} % 2]"

    def ref(self, var: str, shape: tuple[int, int]) -> str:
        rows, cols = shape
        if shape == (1, 1):
            return var
        if cols == 1:
            return f"{var}[{R} / 2][{R} % 2]"
        if rows == 1:
            return f"{var}[{C}]"
        return f"{var}[{R} / 2][4 * ({C} / 2) + 2 * ({R} % 2) + {C} % 2]"

    def row(self) -> str:
        base = "" if self.row0 == "0" else f"{self.row0} + "
        return (f"({base}64 * ({R} / 2) + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() / 4u)"
                f" + 8 * ({R} % 2))")

    def col(self) -> str:
        return f"(8 * ({C} / 2) + 2 * (i32)(cake_lane_id() % 4u) + {C} % 2)"

    def leaf(self, em: KernelEmitter, v: SSAValue) -> str | None:
        role = tile_role(em)
        if v in role.accs:
            return self.ref(role.accs[v].var, (2, 2))
        return None

    def before_read(self, em: KernelEmitter, reader: Operation, v: SSAValue) -> None:
        _retire_mma(em, reader, v)
        _merge_running(em, v)

    def before_write(self, em: KernelEmitter, store: Operation, view: SSAValue) -> None:
        """The safety gate checks that a commit or an accumulator read retired the role's
        wgmmas reading the view in program order, but a ring loop's commit keeps its newest
        group in flight: release it (which retires every group). Otherwise retire the groups
        up to the newest one that reads the view: the groups issued after it in straight-line
        code (_groups_after_view) stay in flight under the store."""
        role = tile_role(em)
        if not any(_reads_view(o, view) for o in role.ops):
            return
        if role.held:
            for commit, held in role.held.items():
                em.release_held(commit, held, reset=True)
            return
        pending = _groups_after_view(em, store, view)
        em.line(f"cake_wgmma_wait<{pending}>();  // no wgmma of this role still reads the view")


class QuadLayout(WgmmaLayout):
    """The wgmma layout with each 16-column block's columns regrouped in fours: row slots as
    there, column slot c = 4 j + e (column 16 j + 4 (l % 4) + e). A thread's rows, the lanes
    sharing a row (a quad) and those sharing a column are the wgmma layout's, so reductions
    and (M, 1) vectors lower alike; only which four columns of each 16 a lane holds differs,
    so an f32 block moves as one 16-byte access per row and lane (a warp reads 8 rows × 64
    contiguous bytes per load instead of 8 × 32). The tiles of a role with no MMA take it
    (`tile_layout`)."""

    vector = 4

    def col(self) -> str:
        return f"(16 * ({C} / 4) + 4 * (i32)(cake_lane_id() % 4u) + {C} % 4)"


#: What a role may contain for its tiles to take the quad layout: ops whose lowerings address
#: columns only through `Layout.col()` (no MMA fragment, ldmatrix/stmatrix, argmin chains or
#: TMA staging, each of which assumes the wgmma columns).
_NOT_QUAD = (MmaOp, StageLoadOp, StageStoreOp, ArgminOp, SumSqOp, TmaStoreOp, SplitStoreOp)


def _quad_role(role: RoleState) -> bool:
    """Whether the role's tiles take the quad layout: it issues no MMA, none of its ops
    needs the wgmma columns, and every tile is 1 or a multiple of 16 columns wide."""
    if role.accs or any(isinstance(op, _NOT_QUAD) for op in role.ops):
        return False
    return all(d[1] == 1 or d[1] % 16 == 0 for op in role.ops
               for r in (*op.results, *op.operands) if isinstance(r.type, TileType)
               for d in [r.type.dims()] if len(d) == 2)


def _reads_view(op: Operation, view: SSAValue) -> bool:
    """Whether MMA `op` reads the bytes of `view`: through it, or through a view that shares
    them by `reuses=` (a view with a live range stored after the one it reuses died)."""
    if not isinstance(op, MmaOp):
        return False
    read = (_view_of(op.a), _view_of(op.b))
    return view in read or any(
        v is not None and isinstance(v.owner, ViewOp) and isinstance(view.owner, ViewOp)
        and reuse_related(v.owner, view.owner) for v in read)


def _groups_after_view(em: KernelEmitter, store: Operation, view: SSAValue) -> int:
    """wgmma groups (one per MMA) issued in the store's block after the newest MMA there
    that reads `view`, walking back as _groups_after does but stopping at the block's start,
    a loop or an `if` that issues MMAs: every MMA not counted is older than those counted,
    so `wait_group n` retires each one that may read the view."""
    groups = 0
    op = store.prev_op
    while op is not None and not isinstance(op, ForOp) and not (
            isinstance(op, IfOp) and _issues_mma(op)):
        if isinstance(op, MmaOp):
            if _reads_view(op, view):
                return groups
            groups += 1
        op = op.prev_op
    return groups


def _view_of(v: SSAValue) -> SSAValue | None:
    stage = stage_source(v)[0].owner
    return stage.view if isinstance(stage, StageOp) else None


def tile_layout(em: KernelEmitter) -> WgmmaLayout:
    """The layout of the current role's tiles: fragments of its tallest tile's rows, the
    columns regrouped in fours in a role with no MMA (`QuadLayout`)."""
    role = tile_role(em)
    heights = tile_heights(role)
    rows = max(heights, default=_FRAG_ROWS * _warpgroups(role))
    if len(heights - {1}) > 1:  # every loop runs over the fragments of the tallest tile
        raise Unsupported(f"register tiles of {' and '.join(map(str, sorted(heights - {1})))} "
                          f"rows in role `{role.name}` (a role's (M, N) tiles and (M, 1) "
                          "vectors share one row count on sm_90a)")
    return (QuadLayout if _quad_role(role) else WgmmaLayout)(em, rows)


def element(em: KernelEmitter, v: SSAValue) -> str:
    """C expression for the element of tile `v` in the register at (cake_r, cake_c)."""
    return shared_element(em, v, tile_layout(em))


def _loops(em: KernelEmitter, frags: int, cols: int | None) -> int:
    """Open the unrolled per-register loops (rows only when cols is None); returns how many
    to close."""
    n = _open_loops(em, [(_F, frags)] + ([(_J, cols // 8), (_E, 2)] if cols else [])
                    + [(_H, 2)])
    em.line(f"const int {R} = 2 * {_F} + {_H};" + (
        f" const int {C} = 2 * {_J} + {_E};" if cols else ""))
    return n


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
    leaves = {leaf for leaf in tile_leaves(v) if role is not None and leaf in role.accs}
    if role is None or not leaves:
        return
    pending = min(_groups_after(em, reader, leaf) for leaf in leaves)
    em.line(f"cake_wgmma_wait<{pending}>();")
    for acc in {role.accs[leaf].var: role.accs[leaf] for leaf in leaves}.values():
        for f in range(acc.frags):
            em.line(f"cake_fence_regs({acc.var}[{f}]);")


def branch(em: KernelEmitter, op: IfOp) -> None:
    """An `if` that reads an accumulator whose wgmma may still be in flight retires that group
    before the branch, not inside it: waited for on one path only, the registers would still
    be in flight at the join on the other, and ptxas 13.0 then serialises every wgmma of the
    kernel (C7514) — the attention kernel's masked block. The wait is the one its first
    reader would do; an MMA's own accumulator operand needs none (wgmmas chain on it).
    A per-warp branch (`if lm.any(...)`: a lazy O rescale) waits inside, where its first
    reader is: waiting on the path that skips it is what it exists to avoid, and ptxas 13.0
    keeps the wgmmas pipelined there (no C75xx; the accumulator is rewritten, not copied, at
    the join: fmha_fwd_sm90_d64_lazy.cake)."""
    role = em.role
    if role is not None and role.accs and not per_warp(op):
        read = {v: None for inner in op.walk() if inner is not op and not isinstance(inner, MmaOp)
                for v in inner.operands if v in role.accs}
        for acc in read:
            _retire_mma(em, op, acc)
    if_op(em, op)


def _groups_after(em: KernelEmitter, reader: Operation, acc: SSAValue) -> int:
    """wgmma groups (one per MMA) issued in straight-line code between the newest MMA into
    `acc` and `reader`, walking back through the reader's block and, from the start of an
    `if` region, on through the block around that `if` (what ran before the branch ran before
    the reader). An `if` with no MMA in it adds no group and is walked over; one whose MMAs
    are predicated (guarded_mmas) commits one group per MMA either way, so it is counted. The
    walk stops at a loop (a later trip's groups are not in its body's prefix), at another
    `if`, or at the kernel or a role's start: the MMA into `acc` is older still, so the groups
    counted so far are a sound bound either way (the safety gate rejects reading an
    accumulator no MMA has written)."""
    groups = 0
    op = reader.prev_op
    while True:
        if op is None:  # the start of a block: leave an `if` region, stop anywhere else
            parent = reader.parent_op()
            if not isinstance(parent, IfOp):
                return groups
            reader, op = parent, parent.prev_op
            continue
        mmas = [op] if isinstance(op, MmaOp) else (
            guarded_mmas(em, op) if isinstance(op, IfOp) else [])
        if isinstance(op, ForOp) or (isinstance(op, IfOp) and not mmas and _issues_mma(op)):
            return groups
        for mma in reversed(mmas):  # predicated wgmmas commit a group whether they run or not
            if mma.acc == acc:
                return groups
            groups += 1
        reader, op = op, op.prev_op


def _issues_mma(op: Operation) -> bool:
    return any(isinstance(o, MmaOp) for o in op.walk())


def _merge_running(em: KernelEmitter, v: SSAValue) -> None:
    """Merge the quads of every running argmin pair that the expression reads, once per
    update: a second merge of merged lanes is redundant, and on the H200 (NVRTC 13.0) it
    swapped the value and index registers (distilled: test/distilled/kmeans_double_merge)."""
    for leaf in tile_leaves(v):
        for use in leaf.uses:
            op = use.operation
            if (isinstance(op, ArgminOp) and op.value not in em.merged
                    and leaf in (op.value, op.index)):
                em.merged.add(op.value)
                frags = _frags(tile_role(em), tile_dims(op.value)[0])
                em.line(f"cake_argmin_quad_merge<{frags}>({em.values[op.value]}, "
                        f"{em.values[op.index]});")


# ---- lowerings ----------------------------------------------------------------------------------












#: The wgmma layout of a (1, N) vector: columns 8 j + 2 (l % 4) + e, N / 4 per thread.
_ROW_VECTOR = (4, "columns 8 j + 2 (l % 4) + e")


def tile_load(em: KernelEmitter, op: TileLoadOp) -> None:
    layout = tile_layout(em)
    if load_tile(em, op, layout):
        return
    rows, cols = tile_dims(op.result)
    if cols != 1:
        if isinstance(layout, QuadLayout):  # the helper reads the wgmma columns
            load_vector(em, op, layout)
        else:
            load_row_vector(em, op, "cake_load_cols", *_ROW_VECTOR)
        return
    # An (L, 1) vector (one value per row: a per-row scale) fills the (M, 1) layout, two rows
    # per thread and fragment, as `tile_store` writes one.
    frags = _frags(tile_role(em), rows)
    ctype = tile_ctype(op.result)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"{ctype} {var}[{frags}][2];  // ({rows}, 1): rows 64 f + 16 w + l/4 + 8 h of each "
            "warpgroup's block")
    with em.block():
        em.line(f"const i32 cake_c[{len(op.coords)}] = {tile_coords(em, op, rows)};")
        em.line(f"cake_load_rows<{frags}, {len(op.coords)}, {ctype}>({var}, "
                f"{em.val(op.tensor)}, cake_c, {_wg_row0(em, rows)}, "
                f"({ctype}){load_other(op, ctype)});")


def stage_load(em: KernelEmitter, op: StageLoadOp) -> None:
    """A (1, N) stage into each thread's columns of the layout, straight from SMEM (the
    lanes of a quad read neighbouring pairs; every warp reads the same 4 N bytes); an
    (M, N) 16-bit stage into packed registers (`_load_block_stage`)."""
    if 1 not in tile_dims(op.result):
        _load_block_stage(em, op)
        return
    var, _, cols = declare_row_vector(em, op, *_ROW_VECTOR)
    em.line(f"cake_load_cols_smem<{cols}>({var}, {em.val(op.source)});")


#: Written into the translation unit by the first (M, N) `load()` that uses it (em.helper).
_LDMATRIX = """// ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 16-bit matrices from SMEM into the
// accumulator layout (register i of lane l: row l / 4, columns 2 (l % 4), +1 of matrix i); lane l
// gives the address of row l % 8 of matrix l / 8 (stmatrix's inverse, address for address).
__device__ __forceinline__ void cake_ldmatrix_x4(u32 addr, u32& r0, u32& r1, u32& r2, u32& r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory");
}
"""


def _load_block_stage(em: KernelEmitter, op: StageLoadOp) -> None:
    """`view[s].load()` of an (M, N) bf16/f16 stage (a residual tile a TMA load brought):
    each thread's elements into 16-bit pairs of the accumulator layout (`u32 v[f][N / 4]`,
    as a packed `lm.regs` tile: arithmetic reads them after `.to(lm.f32)`). A tile of whole
    16-column blocks as tall as the role's fragments is read by `ldmatrix.x4`, the mirror of
    `stage_store`'s stmatrix: per fragment and 16-column block a warp's four 8x8 matrices are
    exactly its packed registers v[f][4 j .. 4 j + 3]; any other tile pair by pair
    (`ld.shared.b32` at the swizzled address `store_stage` writes)."""
    layout = tile_layout(em)
    dtype = dtype_name(op.result.type.element_type)  # type: ignore[attr-defined]
    if dtype == "f32":
        _load_block_stage_f32(em, op, layout)
        return
    if dtype not in ("bf16", "f16"):
        raise Unsupported(f"`load` of a {dtype} (M, N) stage")
    addr, rows, span, swz, elem = stage_geometry(em, op)
    cols = tile_dims(op.result)[1]
    var = em.names.fresh(op.result.name_hint or "block")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"u32 {var}{layout.decl_packed((rows, cols))};  // ({rows}, {cols}) {dtype} from "
            "SMEM, two columns per register")
    at = f"cake_stage_addr<{rows}u, {span}u, {swz}u, {elem}u>"
    with em.block():
        em.line(f"const u32 cake_ld = {unparen(addr)};")
        if cols % 16 or rows != layout.frags * _FRAG_ROWS * _warpgroups(tile_role(em)):
            with layout.row_loop(em, rows), layout.col_loop(em, op.result, step=2):
                em.line(f"{{ const int {C} = {CP}; {layout.ref_packed(var, (rows, cols))} = "
                        f"cake_lds_b32({at}(cake_ld, (u32){paren(layout.row())}, "
                        f"(u32){paren(layout.col())})); }}")
            return
        row, col = _matrix_row_chunk(layout)
        em.line("__syncwarp();  // ldmatrix is .sync.aligned")
        n = _open_loops(em, [(_F, layout.frags), (_J, cols // 16)])
        ldmatrix = em.helper("cake_ldmatrix_x4", _LDMATRIX)
        regs = ", ".join(f"{var}[{_F}][4 * {_J} + {i}]" for i in range(4))
        em.line(f"{ldmatrix}({at}(cake_ld, {row}, {col}), {regs});")
        _close(em, n)


#: Written into the translation unit by the first f32 (M, N) `load()` (em.helper).
_LDS_F32X2 = """// ld.shared.v2.f32: two adjacent f32 columns of a stage (8 bytes, 8-byte aligned).
__device__ __forceinline__ void cake_lds_f32x2(u32 addr, float& x0, float& x1) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(x0), "=f"(x1) : "r"(addr));
}
"""


def _load_block_stage_f32(em: KernelEmitter, op: StageLoadOp, layout: WgmmaLayout) -> None:
    """`view[s].load()` of an (M, N) f32 stage (a state tile a TMA load brought: the KDA
    decode ring): each thread's column pairs of the accumulator layout by one 8-byte
    `ld.shared.v2.f32` each, at the address `store_stage` writes (a 128-byte swizzle spreads
    a warp's 8 rows over every bank), into f32 registers like an `lm.regs` tile."""
    addr, rows, span, swz, elem = stage_geometry(em, op)
    cols = tile_dims(op.result)[1]
    var = em.names.fresh(op.result.name_hint or "block")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"float {var}{layout.decl((rows, cols))};  // ({rows}, {cols}) f32 from SMEM")
    lds = em.helper("cake_lds_f32x2", _LDS_F32X2)
    with em.block():
        em.line(f"const u32 cake_ld = {unparen(addr)};")
        with layout.row_loop(em, rows), layout.col_loop(em, op.result, step=2):
            em.line("float cake_x[2];")
            em.line(f"{{ const int {C} = {CP}; {lds}(cake_stage_addr<{rows}u, {span}u, {swz}u, "
                    f"{elem}u>(cake_ld, (u32){paren(layout.row())}, (u32){paren(layout.col())}), "
                    "cake_x[0], cake_x[1]); }")
            for e in (0, 1):
                em.line(f"{{ const int {C} = {CP} + {e}; {layout.ref(var, (rows, cols))} = "
                        f"cake_x[{e}]; }}")


def tma_store(em: KernelEmitter, op: TmaStoreOp) -> None:
    """A register accumulator (converted) is stored from its fragments, a deferred store
    packed for later (lowering.py); any other tile expression is evaluated per register as
    it is stored."""
    value = op.value.owner.source if isinstance(op.value.owner, ConvertOp) else op.value
    role = tile_role(em)
    if value in role.accs or _deferred(role, op):
        tma_store_sm90(em, op)
    else:
        store_tile(em, op, tile_layout(em))


#: Written into the translation unit by the first `store` that uses it (em.helper).
_STMATRIX = """// stmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 16-bit matrices from the accumulator
// layout (register i of lane l: row l / 4, columns 2 (l % 4), +1 of matrix i) into SMEM; lane l
// gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void cake_stmatrix_x4(u32 addr, const u32 (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
               "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}
"""


def stage_store(em: KernelEmitter, op: StageStoreOp) -> None:
    """`view[s].store(tile)` of a 16-bit tile whose columns are whole 16-column blocks: per
    fragment and 16-column block, each warp packs its four 8x8 matrices (row halves h × column
    octets 2q, 2q + 1: exactly the accumulator registers of those elements) and writes them
    with one stmatrix.x4, lane l addressing row l % 8 of matrix l / 8 at its swizzled 16-byte
    chunk. Other tiles take the shared column-pair stores (targets/emit/tiles.py)."""
    layout = tile_layout(em)
    dtype = dtype_name(op.dest.type.element_type)  # type: ignore[attr-defined]
    rows, cols = tile_dims(op.dest)
    if dtype not in ("bf16", "f16") or cols % 16 or rows != layout.frags * _FRAG_ROWS * \
            _warpgroups(tile_role(em)):
        store_stage(em, op, layout)
        return
    value = op.value
    if isinstance(value.owner, ConvertOp) and isinstance(value.owner.source.type, TileType):
        value = value.owner.source
    addr, rows, span, swz, elem = stage_geometry(em, op)
    em.source_comment(op)
    layout.before_write(em, op, op.dest.owner.view)  # type: ignore[union-attr]
    layout.before_read(em, op, value)
    row, col = _matrix_row_chunk(layout)
    with em.block():
        em.line(f"const u32 cake_st = {unparen(addr)};")
        em.line("__syncwarp();  // stmatrix is .sync.aligned")
        n = _open_loops(em, [(_F, layout.frags), (_J, cols // 16)])
        em.line("u32 cake_m[4];  // matrices (h, octet): (0, 2j), (1, 2j), (0, 2j + 1), (1, 2j + 1)")
        for i, (h, octet) in enumerate(((0, 0), (1, 0), (0, 1), (1, 1))):
            with em.block():
                em.line(f"const int {R} = 2 * {_F} + {h}; const int {CP} = 4 * {_J} + {2 * octet};")
                column_pair(em, value, layout)
                em.line(f"cake_m[{i}] = {STAGE_STORE_TRAITS[dtype]}::pack(cake_x[0], cake_x[1]);")
        stmatrix = em.helper("cake_stmatrix_x4", _STMATRIX)
        em.line(f"{stmatrix}(cake_stage_addr<{rows}u, {span}u, {swz}u, {elem}u>(cake_st, {row}, "
                f"{col}), cake_m);")
        _close(em, n)


def _matrix_row_chunk(layout: WgmmaLayout) -> tuple[str, str]:
    """(row, column) of the 16-byte row chunk lane l addresses in an ldmatrix/stmatrix.x4 of
    fragment cake_f, 16-column block cake_j: row l % 8 of matrix l / 8, matrices (row half,
    column octet) = (0, 2j), (1, 2j), (0, 2j + 1), (1, 2j + 1)."""
    base = "" if layout.row0 == "0" else f"{layout.row0} + "
    row = (f"(u32)({base}64 * {_F} + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() % 8u) "
           "+ 8 * (i32)((cake_lane_id() / 8u) % 2u))")
    return row, f"(u32)(8 * (2 * {_J} + (i32)(cake_lane_id() / 16u)))"


def _open_loops(em: KernelEmitter, loops: list[tuple[str, int]]) -> int:
    for var, count in loops:
        em.line("#pragma unroll")
        em.line(f"for (int {var} = 0; {var} < {count}; ++{var}) {{")
        em.depth += 1
    return len(loops)


def _deferred(role: RoleState, op: TmaStoreOp | TileStoreOp) -> bool:
    return role.deferred_store is not None and role.deferred_store.op is op


def tile_store(em: KernelEmitter, op: TileStoreOp) -> None:
    rows, cols = tile_dims(op.value)
    if _deferred(tile_role(em), op):
        tma_store_sm90(em, op)
        return
    if cols > 1:
        store_tile(em, op, tile_layout(em))
        return
    role = tile_role(em)
    frags = _frags(role, rows)
    ctype = tile_ctype(op.value)
    rank = len(op.coords)
    em.source_comment(op)
    _retire_mma(em, op, op.value)
    _merge_running(em, op.value)
    with em.block():
        em.line(f"{ctype} cake_v[{frags}][2];")
        n = _loops(em, frags, None)
        em.line(f"cake_v[{_F}][{_H}] = {element(em, op.value)};")
        _close(em, n)
        em.line(f"const i32 cake_c[{rank}] = {tile_coords(em, op, rows)};")
        em.line(f"cake_store_rows<{frags}, {rank}, {ctype}>(cake_v, {em.val(op.tensor)}, cake_c, "
                f"{_wg_row0(em, rows)});")






def sum_sq(em: KernelEmitter, op: SumSqOp) -> None:
    rows, atoms, atom_bytes, pitch, swz = sum_sq_layout(em, op)
    frags = _frags(tile_role(em), rows)
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
    rows, cols = tile_dims(op.source)
    if cols % 8:
        raise Unsupported(f"`lm.argmin` over {cols} columns (a multiple of 8 is needed)")
    frags = _frags(tile_role(em), rows)
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
                f"{paren(em.val(op.base))} + 2 * (i32)(cake_lane_id() % 4u));")
