"""sm_80 / sm_89 / sm_120a / sm_121a lowering of register-tile values, and of register tiles
of a role that accumulates with mma.sync on sm_100a/sm_103a: tiles in the mma.sync m16n8
fragment layout of the role's warp grid (device helpers in targets/emit/tiles.cuh).

The role's warps form the wm × wn grid of its accumulator (lowering.py's `WarpTiling`), or,
in a role without one, wm = the role's warps (each warp owns M / warps rows). Warp w owns
rows wr + 16 mt + l/4 + 8 h and columns wc + 8 nt + 2 (l % 4) + e of the tile (lane l;
wr, wc its block's origin), so an (M, 1) vector is `E v[2 MT]` (row slot 2 mt + h, the same
in the 4 lanes of a quad) and a (1, N) one `E v[2 NT]` (column slot 2 nt + e). A row's
columns span the quad's lanes and, when wn > 1, other warps: row reductions are shuffles
within the quad, and need wn = 1 (the conformance gate refuses others, CAKE-H020).
mma.sync is synchronous, so reading an accumulator needs no wait.
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    PURE_TILE_OPS, ConvertOp, MmaOp, RegsOp, StageLoadOp, SumSqOp, TileAssignOp, TileLoadOp,
    TileReduceOp, TileStoreOp, TileType, TmaStoreOp,
)
from cakec.targets.emit.emitter import KernelEmitter, RoleState
from cakec.targets.emit.tiles import (
    C, R, Layout, declare_regs, load_other, load_tile, store_rows, store_tile, sum_sq_layout, tile_coords,
    tile_ctype, tile_dims, tile_role,
)
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sm80.lowering import (
    FRAG_M, FRAG_N, WarpTiling, tilings, tma_store_sm80, warp_tiling,
)


def role_grid(warps: int, rows: int, cols: int, acc: tuple[int, int] | None) -> tuple[int, int] | None:
    """(wm, wn) of a role's tiles: its accumulator's warp grid, else every warp its own
    rows (M a multiple of 16 per warp). The conformance gate asks the same question."""
    if acc is not None:
        return warp_tiling(*acc, warps)
    if rows % (FRAG_M * warps) == 0 and (cols == 1 or cols % FRAG_N == 0):
        return warps, 1
    return None


class MmaSyncLayout(Layout):
    """Row slot r = 2 mt + h, column slot c = 2 nt + e of the warp's m16n8 fragments."""

    row_lanes = (1, 2)
    col_lanes = (4, 8, 16)

    def __init__(self, em: KernelEmitter, t: WarpTiling):
        self.t = t
        self.accs = {v: a.var for v, a in tilings(em).items()}

    def row_warps(self) -> tuple[int, str]:
        """The wm warps of a column block of the warp grid hold its rows."""
        return self.t.wm, f"(i32)((cake_warp - {self.t.first}u) % {self.t.wm}u)"

    def row_slots(self, rows: int) -> int:
        self.check(rows, 1)
        return 2 * self.t.mt

    def col_slots(self, cols: int) -> int:
        self.check(1, cols)
        return cols // self.t.wn // 4

    def check(self, rows: int, cols: int) -> None:
        """A warp's block of any tile starts where its accumulator block does (`origin`), so
        a tile split over several warps along a dimension must be as long as the
        accumulator there ((M, 1) and (1, N) vectors are split along one dimension only)."""
        tall, wide = self.t.mt * FRAG_M * self.t.wm, self.t.nt * FRAG_N * self.t.wn
        if rows > 1 and self.t.wm > 1 and rows != tall:
            what = f"a tile of {rows} rows"
        elif cols > 1 and self.t.wn > 1 and cols != wide:
            what = f"a tile of {cols} columns"
        else:
            return
        raise Unsupported(
            f"{what} in a role whose warps split its ({tall}, {wide}) accumulator "
            f"{self.t.wm} × {self.t.wn} (on mma.sync a tile split over warps takes the "
            "accumulator's extent along that dimension)")

    def decl(self, shape: tuple[int, int]) -> str:
        rows, cols = shape
        self.check(rows, cols)
        if shape == (1, 1):
            return ""
        if cols == 1:
            return f"[{2 * self.t.mt}]"
        n = cols // self.t.wn // FRAG_N
        return f"[{2 * n}]" if rows == 1 else f"[{self.t.mt}][{n}][4]"

    def ref(self, var: str, shape: tuple[int, int]) -> str:
        rows, cols = shape
        if shape == (1, 1):
            return var
        if cols == 1:
            return f"{var}[{R}]"
        if rows == 1:
            return f"{var}[{C}]"
        return f"{var}[{R} / 2][{C} / 2][2 * ({R} % 2) + {C} % 2]"

    def row(self) -> str:
        r0, _ = self.t.origin()
        return f"((i32)({r0}) + 16 * ({R} / 2) + (i32)(cake_lane_id() / 4u) + 8 * ({R} % 2))"

    def col(self) -> str:
        _, c0 = self.t.origin()
        return f"((i32)({c0}) + 8 * ({C} / 2) + 2 * (i32)(cake_lane_id() % 4u) + {C} % 2)"

    def writes_row(self) -> str:
        return f"cake_lane_id() % 4u == 0u && (cake_warp - {self.t.first}u) / {self.t.wm}u == 0u"

    def leaf(self, em: KernelEmitter, v: SSAValue) -> str | None:
        return self.ref(self.accs[v], (2, 2)) if v in self.accs else None

    def before_read(self, em: KernelEmitter, reader: Operation, v: SSAValue) -> None:
        # a column reduction (axis=0) meets the wm warps of each column block in SMEM
        if isinstance(reader, TileReduceOp) and reader.axis.value.data == 1 and self.t.wn > 1:
            raise Unsupported("a row reduction of a tile split over warps along its columns")


def tile_layout(em: KernelEmitter) -> MmaSyncLayout:
    role = tile_role(em)
    acc = next((op.acc for op in role.ops if isinstance(op, MmaOp)
                and isinstance(op.acc.owner, RegsOp)), None)
    known = tilings(em).get(acc) if acc is not None else None
    if known is not None:
        return MmaSyncLayout(em, known)
    dims = [r.type.dims() for op in role.ops for r in op.results if isinstance(r.type, TileType)]
    rows = max((d[0] for d in dims), default=FRAG_M)
    cols = max((d[1] for d in dims), default=1)
    warps = len(role.warps)
    grid = role_grid(warps, rows, cols, None)
    if grid is None or role.warps != list(range(role.first, role.first + warps)):
        raise Unsupported(f"({rows}, {cols}) register tiles over the {warps} warps of role "
                          f"`{role.name}`")
    wm, wn = grid
    return MmaSyncLayout(em, WarpTiling("", wm, wn, rows // wm // FRAG_M,
                                        cols // wn // FRAG_N, role.first))


def declare_tiles(em: KernelEmitter, role: RoleState, ops: list[Operation]) -> None:
    if any(isinstance(op, (TileAssignOp, TileReduceOp, *PURE_TILE_OPS)) for op in ops):
        em.try_lower(role.op, lambda: declare_regs(em, ops, tile_layout(em)))


def _vector(em: KernelEmitter, op: TileLoadOp | StageLoadOp, what: str):
    """Declare the registers of a (1, N) or (M, 1) vector that `op` fills, in this layout
    (`what` ends the declaration's comment);
    (var, ctype, layout, this thread's element position, the loop over its slots)."""
    layout = tile_layout(em)
    rows, cols = tile_dims(op.result)
    ctype = tile_ctype(op.result)
    var = em.names.fresh(op.result.name_hint or "vec")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"{ctype} {var}{layout.decl((rows, cols))};  // ({rows}, {cols}){what}")
    pos, loop = ((layout.col(), layout.col_loop(em, op.result)) if rows == 1
                 else (layout.row(), layout.row_loop(em, rows)))
    return var, ctype, layout, pos, loop


def tile_load(em: KernelEmitter, op: TileLoadOp) -> None:
    """A (1, N) or (M, 1) vector: each thread its column (row) slots, element by element
    with bounds."""
    if load_tile(em, op, tile_layout(em)):
        return
    rows, cols = tile_dims(op.result)
    var, ctype, layout, pos, loop = _vector(
        em, op, f": this warp's {'columns' if rows == 1 else 'rows'}")
    rank = len(op.coords)
    with em.block():
        em.line(f"const i32 cake_at[{rank}] = {tile_coords(em, op, max(rows, cols))};")
        with loop:
            em.line(f"{layout.ref(var, (rows, cols))} = cake_load_elem<{rank}, {ctype}>("
                    f"{em.val(op.tensor)}, cake_at, {pos}, ({ctype}){load_other(op, ctype)});")


def stage_load(em: KernelEmitter, op: StageLoadOp) -> None:
    """A (1, N) or (M, 1) f32/i32 stage: each thread reads its own slots from SMEM."""
    var, ctype, layout, pos, loop = _vector(em, op, " from SMEM")
    rows, cols = tile_dims(op.result)
    with loop:
        em.line(f"cake_from_bits({layout.ref(var, (rows, cols))}, cake_lds_b32("
                f"{em.val(op.source)} + 4u * (u32){pos}));")


def sum_sq(em: KernelEmitter, op: SumSqOp) -> None:
    rows, atoms, atom_bytes, pitch, swz = sum_sq_layout(em, op)
    layout = tile_layout(em)
    var = em.names.fresh(op.result.name_hint or "sum_sq")
    em.values[op.result] = var
    em.source_comment(op)
    em.line(f"float {var}{layout.decl((rows, 1))};  // ({rows}, 1)")
    with layout.row_loop(em, rows):
        em.line(f"{var}[{R}] = cake_sum_sq_quad_bf16<{atoms}u, {atom_bytes}u, {pitch}u, {swz}u>("
                f"{em.val(op.source)}, (u32){layout.row()});")


def tile_store(em: KernelEmitter, op: TileStoreOp) -> None:
    layout = tile_layout(em)
    if tile_dims(op.value)[1] > 1:
        store_tile(em, op, layout)
    else:
        store_rows(em, op, layout)


def tma_store(em: KernelEmitter, op: TmaStoreOp) -> None:
    """The role's register accumulator (converted) is stored by lowering.py; any other tile
    expression is evaluated per register as it is stored."""
    value = op.value.owner.source if isinstance(op.value.owner, ConvertOp) else op.value
    if value in tilings(em):
        tma_store_sm80(em, op)
    else:
        store_tile(em, op, tile_layout(em))

