"""sm_80 / sm_89 / sm_120a / sm_121a: cp.async tile copies (`copy_load`), ldmatrix + mma.sync
into warp-tiled register accumulators and their stores; mbarriers in their pre-sm_90 forms on
sm_80/sm_89, TMA loads on sm_120a/sm_121a. sm_100a/sm_103a reuse the mma.sync lowering here
for register accumulators.

    lowering.py    copy_load, mma.sync, lm.commit, tma_store of a register accumulator
    tiles.py       register tiles in the mma.sync fragment layout (vectors, reductions, stores)
    mma_sync.cuh   device helpers: cp.async copies, ldmatrix/mma.sync, mbarrier renames
"""

from __future__ import annotations

from cakec.dialects.cake import (
    ArriveOp, CommitOp, ConvertOp, CopyLoadOp, FenceProxyOp, MmaOp, RegsOp, StageLoadOp,
    SumSqOp, TileLoadOp, TileStoreOp, TmaLoadOp, TmaStoreOp, TmaStoreStageOp,
    SkipOp, WaitOp,
)
from cakec.targets.emit import barriers, common
from cakec.targets.emit.emitter import Backend
from cakec.targets.sku import get_sku
from cakec.targets.emit.tiles import TILE_LOWERINGS
from cakec.targets.sm80 import lowering, tiles


def backend(target: str) -> Backend:
    tma = {TmaLoadOp: barriers.tma_load} if get_sku(target).has("tma") else {}
    if get_sku(target).has("tma_store"):
        tma[TmaStoreStageOp] = barriers.tma_store_stage
    return Backend(
        lowerings=common.COMMON | {
            SkipOp: barriers.skip, WaitOp: barriers.wait, ArriveOp: barriers.arrive,
            CommitOp: lowering.commit_sm80,
            FenceProxyOp: barriers.fence_proxy, MmaOp: lowering.mma_sm80,
            ConvertOp: common.convert, TmaStoreOp: tiles.tma_store,
            CopyLoadOp: lowering.copy_load, RegsOp: lowering.declare_acc,
            **TILE_LOWERINGS, TileLoadOp: tiles.tile_load, TileStoreOp: tiles.tile_store,
            StageLoadOp: tiles.stage_load, SumSqOp: tiles.sum_sq,
        } | tma,
        headers=("emit/support.cuh", "sm80/mma_sync.cuh", "emit/tiles.cuh"),
        declare_tiles=tiles.declare_tiles, tile_layout=tiles.tile_layout,
    )
