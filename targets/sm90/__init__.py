"""sm_90a (Hopper): wgmma from SMEM descriptors into register accumulators, wgmma commit
groups, register-accumulator stores and register tiles in the wgmma fragment layout.

    lowering.py   wgmma, lm.commit, tma_store, in-flight commits and deferred epilogue stores
    ring.py       which ring-loop commits are held back (read by the safety model too)
    tiles.py      register tiles in the wgmma accumulator layout (vectors, argmin, sum_sq)
    wgmma.cuh     device helpers: wgmma fragment stores (deferred in parts)
    tiles.cuh     device helpers of the register-tile lowering
"""

from __future__ import annotations

from cakec.dialects.cake import (
    ArgminOp, ArriveOp, CommitOp, ConvertOp, FenceProxyOp, ForOp, IfOp, MmaOp, RegsOp,
    StageLoadOp, StageStoreOp, SumSqOp, TileLoadOp, TileStoreOp, TmaLoadOp, TmaStoreOp,
    TmaStoreStageOp, SkipOp, WaitOp,
)
from cakec.targets.emit.emitter import Backend


def backend(target: str) -> Backend:
    # The lowerings (~12 ms of imports) are imported here, not with the package: the
    # verifier's safety model imports ring.py for every kernel, whatever its target.
    from cakec.targets.emit import barriers, common
    from cakec.targets.emit.tiles import TILE_LOWERINGS
    from cakec.targets.sm90 import lowering, tiles

    return Backend(
        lowerings=common.COMMON | {
            SkipOp: barriers.skip, WaitOp: barriers.wait, TmaLoadOp: barriers.tma_load,
            ArriveOp: barriers.arrive,
            TmaStoreStageOp: barriers.tma_store_stage,
            FenceProxyOp: barriers.fence_proxy, ConvertOp: common.convert,
            CommitOp: lowering.commit_sm90, MmaOp: lowering.mma_sm90,
            TmaStoreOp: tiles.tma_store, RegsOp: lowering.declare_acc,
            ForOp: lowering.for_loop, IfOp: tiles.branch,
            **TILE_LOWERINGS, TileLoadOp: tiles.tile_load, TileStoreOp: tiles.tile_store,
            StageLoadOp: tiles.stage_load, SumSqOp: tiles.sum_sq, ArgminOp: tiles.argmin,
            StageStoreOp: tiles.stage_store,
        },
        headers=("emit/support.cuh", "sm90/wgmma.cuh", "emit/tiles.cuh", "sm90/tiles.cuh"),
        declare_tiles=tiles.declare_tiles, tile_layout=tiles.tile_layout,
    )
