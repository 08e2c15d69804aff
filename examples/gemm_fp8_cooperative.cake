# The cooperative schedule of examples/gemm_fp8.cake (its previous form): C = (A·Bᵀ)·sa·sb:
# dequantisation scales of the activations and the weights; Sb a [1, N] TMA tensor), C [M, N]
# bf16; f32 accumulation.
# Any M, N, K ≥ 1 with K % 16 == 0 (TMA needs 16-byte rows); tails are handled by TMA's zero
# fill on loads and by bounds-checked loads and stores.
#
# The schedule is examples/gemm_bf16.cake's with e4m3 operands: a stage is 128 elements deep
# (one 128-byte swizzle row, the same 48 KiB per stage as bf16's 64), so each warpgroup issues
# 4 × wgmma m64n256k32 e4m3 per stage, twice the FLOPs per byte of SMEM. The epilogue:
# * the producer brings each tile's 256 column scales (1 KiB) into SMEM by TMA (a 2-deep ring
#   of its own, `sb_full`/`sb_empty`); after the K loop the consumers read them from there
#   (64 per thread: from global memory the compiler hoisted all 64 loads above the first use
#   and spilled the accumulator under the kernel's 168-register cap) and hand the buffer back;
# * each thread reads its 2 rows' sa from global memory before the K loop (the latency
#   hides under the tile's MMAs instead of stalling both warpgroups after them);
# * the store evaluates acc · sa · sb per register into packed bf16 pairs: a whole tile is
#   written in parts under the next tile's wgmma groups, a tail bounds-checked at once. The
#   math role has 240 registers (the producer 24): accumulator 128 + packed tile 64 + scales
#   66 need them (at 232 ptxas spills, so the emitter would store at once instead).
@cake.schedule(target="sm_90a")
def gemm_fp8_cooperative(lm, A: LM.tma2d, B: LM.tma2d, Sa: LM.tensor1d, Sb: LM.tma2d, C: LM.tma2d,
                         M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 256)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 128), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(198656)                       # 4 stages × (16 KiB of A + 32 KiB of B) + 2 KiB
    sa = pool.view(offset=0, shape=(128, 128), dtype=lm.e4m3, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(256, 128), dtype=lm.e4m3, stage=4, swizzle=128b)
    ssb = pool.view(offset=196608, shape=(1, 256), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=24)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=240)
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    sb_pipe = lm.pipeline(stages=2)
    sb_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=sb_pipe)
    sb_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=sb_pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            j = t // lm.num_blocks(0)                # this CTA's j-th tile
            lm.wait(sb_empty, stage=j % 2)
            ssb.tma_load(Sb, coords=(0, n_tile), stage=j % 2, barrier=sb_full)
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            # Loaded before the K loop, whose MMAs hide the global-memory latency (2 registers).
            row_scale = Sa.load(coords=(m_tile,), shape=(128, 1), dtype=lm.f32)
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            j = t // lm.num_blocks(0)
            lm.wait(sb_full, stage=j % 2)
            col_scale = ssb[j % 2].load()
            lm.arrive(sb_empty, stage=j % 2)
            C.tma_store((acc * row_scale * col_scale).to(lm.bf16), coords=(m_tile, n_tile))
