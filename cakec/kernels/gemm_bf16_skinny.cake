# C = A · Bᵀ for skinny M (decode: M ≤ 64): A [M, K], B [N, K], C [M, N], bf16 in, f32
# accumulation, bf16 out; any M, N, K ≥ 1 with K % 8 == 0, like gemm_bf16.cake.
#
# At M ≤ 64 the product is bound by streaming B (the weights) from memory once: its M·N·K
# multiply-adds are a rounding error next to N·K·2 bytes. The 128×256 tile of gemm_bf16.cake
# gives N = 4096 only 16 tiles, 16 of 132 SMs pulling B. This schedule instead:
# * tiles C by 64×32, so N = 4096 is 128 tiles: every SM streams its own 32 rows of B;
# * persistent: one CTA per SM loops over the tiles, the ring running on across them, so a
#   large N (28672: 896 tiles) never waits on a fresh CTA's empty pipeline;
# * keeps 14 stages of 64 K-columns in flight per SM (14 × 4 KiB of B): at ~1 µs of DRAM
#   latency that is ~57 GB/s per SM, over the ~36 GB/s fair share of 4.8 TB/s (measured
#   on the H200, `cakec tune gemm`: the 64×64 form, gemm_bf16_skinny_n64.cake, streams B at
#   31-40 GB/s per SM at M = 64, less below M = 64, where A's box reads past M; docs/kernels.md);
# * one producer warpgroup (one elected thread) issues the TMA loads; one consumer
#   warpgroup issues 4 × wgmma m64n32k16 per stage. A's 64×64 box reads zeros past M (TMA
#   fill) into rows no store writes; A is M×K and every CTA reads it, from L2.
@cake.schedule(target="sm_90a")
def gemm_bf16_skinny(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 64)
    tiles_n = lm.cdiv(N, 32)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(172032)                       # 14 stages × (8 KiB of A + 4 KiB of B)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=14, swizzle=128b)
    sb = pool.view(offset=114688, shape=(32, 64), dtype=lm.bf16, stage=14, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=14)
    full = lm.barrier(count=14, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=14, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 32), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m                 # M tiles of one N tile run side by side (L2)
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 14
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 14
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
