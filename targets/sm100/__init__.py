"""sm_100a / sm_103a (Blackwell datacenter): Tensor Memory allocation, single-thread
tcgen05.mma and tcgen05.commit, tcgen05.ld epilogues, and register tiles in the tcgen05.ld
row-per-thread layout. Register accumulators (mma.sync) and `copy_load` lower as on sm_80
(targets/sm80); TMA, waits and arrivals are the shared ones (targets/emit).

    lowering.py   TMEM entry/exit, tcgen05.mma, commit, fenced waits/arrivals, TMEM stores
    tiles.py      register tiles read from TMEM 32 columns at a time (vectors, argmin, sum_sq)
    tcgen05.cuh   device helpers: TMEM alloc/dealloc, tcgen05.mma/commit/ld, row stores
    tiles.cuh     device helpers of the register-tile lowering
"""

from __future__ import annotations

from cakec.dialects.cake import (
    ArgminOp, ArriveOp, CommitOp, ConvertOp, CopyLoadOp, FenceProxyOp, MmaOp, RegsOp,
    StageLoadOp, SumSqOp, TileLoadOp, TileStoreOp, TmaLoadOp, TmaStoreOp, TmaStoreStageOp,
    SkipOp, WaitOp,
)
from cakec.targets.emit import barriers, common
from cakec.targets.emit.emitter import Backend
from cakec.targets.emit.tiles import TILE_LOWERINGS
from cakec.targets.sm80 import lowering as sm80
from cakec.targets.sm80 import tiles as sm80_tiles
from cakec.targets.sm100 import lowering, tiles


def backend(target: str) -> Backend:
    return Backend(
        lowerings=common.COMMON | {
            SkipOp: barriers.skip, WaitOp: lowering.wait_sm100, TmaLoadOp: barriers.tma_load,
            TmaStoreStageOp: barriers.tma_store_stage,
            ArriveOp: lowering.arrive_sm100, CommitOp: lowering.commit_sm100,
            FenceProxyOp: barriers.fence_proxy, MmaOp: lowering.mma_sm100,
            TmaStoreOp: tiles.tma_store, RegsOp: sm80.declare_acc,
            CopyLoadOp: sm80.copy_load,
            **TILE_LOWERINGS,
            TileLoadOp: tiles.per_layout(tiles.tile_load, sm80_tiles.tile_load),
            TileStoreOp: tiles.per_layout(tiles.tile_store, sm80_tiles.tile_store),
            StageLoadOp: tiles.per_layout(tiles.stage_load, sm80_tiles.stage_load),
            SumSqOp: tiles.per_layout(tiles.sum_sq, sm80_tiles.sum_sq), ArgminOp: tiles.argmin,
            ConvertOp: tiles.convert,
        },
        headers=("emit/support.cuh", "sm80/mma_sync.cuh", "sm100/tcgen05.cuh", "emit/tiles.cuh",
                 "sm100/tiles.cuh"),
        entry=lowering.tmem_entry, exit=lowering.tmem_exit,
        declare_tiles=tiles.declare_tiles, tile_layout=tiles.tile_layout,
    )
