"""CAKE-H020: register-tile forms the target family's tile layout does not lower; CAKE-H021:
register tiles stored into SMEM stages of a dtype no family writes.

Register tiles live in the layout of the MMA their role issues (docs/language.md,
"Register tiles"). On the mma.sync families (sm_80, sm_89, sm_120a, sm_121a, and a role of
sm_100a/sm_103a that accumulates in registers) a row spans the lanes of a quad and, when the
accumulator's warp grid splits its columns (wn > 1), other warps, which a shuffle cannot
reach; so row reductions need wn = 1, and `lm.argmin` (the running-argmin merge) is lowered
in the wgmma and TMEM layouts only. "Verify implies emit": these are refused here, never at
code generation. The layout question is answered by the backend (targets/sm80/tiles.py)."""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.ir import Operation

from cakec.dialects import cake
from cakec.targets.emit.tiles import PACKED, STAGE_STORE_TRAITS
from cakec.targets.sm80.tiles import role_grid

#: Ops whose presence makes a role hold register tiles in its layout.
_TILE_OPS = (*cake.PURE_TILE_OPS, cake.TileReduceOp, cake.TileAssignOp, cake.ArgminOp,
             cake.SumSqOp, cake.TileLoadOp, cake.TileStoreOp, cake.SplitStoreOp,
             cake.StageLoadOp, cake.StageStoreOp)


def tile_problems(family: str, roles: dict[cake.RoleOp, list[Operation]]
                  ) -> Iterator[tuple[Operation, str, str]]:
    """(op, message, help) for each register-tile form of `roles` (role → its ops) that the
    target family `family` (Sku.codegen) cannot lower."""
    for role, ops in roles.items():
        tile_ops = [op for op in ops if isinstance(op, _TILE_OPS)]
        if not tile_ops:
            continue
        acc = next((op.acc for op in ops if isinstance(op, cake.MmaOp)
                    and isinstance(op.acc.owner, cake.RegsOp)), None)
        if family != "sm90":
            yield from _packed(tile_ops)
        if family == "sm90" or (family == "sm100" and acc is None):
            continue
        yield from _mma_sync(role, ops, tile_ops, acc)


def _packed(tile_ops: list[Operation]) -> Iterator[tuple[Operation, str, str]]:
    """16-bit `lm.regs` tiles are held packed, two columns per register, in the wgmma layout
    only (the register-A operand they feed is wgmma's)."""
    for op in tile_ops:
        if isinstance(op, cake.TileAssignOp) and cake.dtype_name(
                op.dest.type.element_type) in PACKED:
            yield (op, "a 16-bit register tile (held packed, two columns per register) is "
                   "lowered only in the wgmma layout of sm_90a, not",
                   "keep the tile in f32 (`lm.regs(..., dtype=lm.f32)`) and convert where it "
                   "is used, or target sm_90a")
        elif isinstance(op, cake.StageLoadOp) and 1 not in op.result.type.dims():
            yield (op, "an (M, N) stage read into registers (`view[s].load()`, held packed, "
                   "two columns per register) is lowered only in the wgmma layout of sm_90a, "
                   "not", "read the tile from global memory where it is used (`T.load(coords, "
                   "shape, dtype)`), or target sm_90a")


def store_problems(stores: list[cake.StageStoreOp]) -> Iterator[tuple[Operation, str, str]]:
    """CAKE-H021: `view[s].store` into a stage whose dtype no family writes from registers
    (each lowers bf16, f16, f32 and tf32 stages: two adjacent columns per store)."""
    for op in stores:
        dtype = cake.dtype_name(op.dest.type.element_type)
        if dtype not in STAGE_STORE_TRAITS:
            yield (op, f"`store` of a register tile into an SMEM stage of {dtype} is not lowered",
                   "store into a " + ", ".join(STAGE_STORE_TRAITS) + " view (an 8-bit MMA "
                   "operand is loaded by TMA)")


def _mma_sync(role: cake.RoleOp, ops: list[Operation], tile_ops: list[Operation],
              acc) -> Iterator[tuple[Operation, str, str]]:
    name = role.sym_name.data
    warps = len(role.warps.get_values())
    dims = [r.type.dims() for op in ops for r in op.results if isinstance(r.type, cake.TileType)]
    rows = max((d[0] for d in dims), default=16)
    cols = max((d[1] for d in dims), default=1)
    grid = role_grid(warps, rows, cols, tuple(acc.type.dims()) if acc is not None else None)
    if grid is None:
        yield (tile_ops[0], f"({rows}, {cols}) register tiles cannot be split over the "
               f"{warps} warps of role `{name}` in mma.sync fragments",
               f"give each warp of `{name}` a multiple of 16 rows (and of 16 columns)")
        return
    for op in tile_ops:
        if isinstance(op, cake.ArgminOp):
            yield (op, "`lm.argmin` is not lowered in the mma.sync fragment layout",
                   "compute `t.min(axis=1)` and `t.argmin(axis=1)` of the tile instead")
        elif isinstance(op, cake.TileReduceOp) and op.axis.value.data == 1 and grid[1] > 1:
            # (a column reduction, axis=0, meets the warps holding its rows in SMEM)
            yield (op, f"a row reduction of a tile whose columns role `{name}` splits over "
                   f"{grid[1]} warps (mma.sync warp grid {grid[0]}x{grid[1]}): a shuffle "
                   "reaches only the lanes of one warp",
                   "reduce in a role whose warps each hold whole rows (one warp, or a "
                   "grid mma.sync lays out as warps × 1); on sm_100a/sm_103a, accumulate in TMEM")
