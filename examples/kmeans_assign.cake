# Flash-KMeans assignment on Hopper: idx[b, i] = argmin_j ||x_i - c_j||², dist[b, i] = that
# squared distance, for X [B, N, D] and C [B, K, D] bf16 (D ≤ 128, D % 8 == 0).
#
# ||x - c||² = ||x||² + ||c||² - 2⟨x, c⟩: the cross term is a tensor-core GEMM with D as the
# MMA's K dimension, so the N×K distance matrix never leaves the registers.
# * One CTA per (128-row block of X, batch): X's tile is loaded once, the batch's centroids
#   stream through a 4-stage TMA ring of 128×D tiles. X and C are 3-D tensor maps, so a box
#   can never reach into the next batch: rows past N or K read zeros.
# * Two consumer warpgroups split the 128 rows; each wgmma m64n128k16 × D/16 gives a 64×128
#   f32 score tile per warpgroup, 64 registers per thread. Centroid tiles go in pairs, into
#   two accumulators: the second tile's wgmmas run while the first tile's epilogue does (its
#   read waits for one wgmma group, not both). Odd tile counts load one all-zero tile past K.
#   (Splitting a tile into two 64-wide halves would overlap as well, but m64n64 re-reads X
#   from SMEM twice as often: ~156 B/clk with the TMA writes, over the SM's 128.)
# * Epilogue per centroid tile: score = ||c||² − 2⟨x, c⟩, one FFMA per element (||x||² is
#   the same for every centroid of a row, so it is added once, to the final distance); each
#   thread keeps the running (min, index) of its two rows in registers, tiles visited in
#   increasing index order, and the row's quad merges them (lowest index on ties) only when
#   the result is stored.
# * ||c||² comes from examples/kmeans_csq.cake (one launch per call, timed with this one);
#   centroids past K load ||c||² = inf and never win.
@cake.schedule(target="sm_90a")
def kmeans_assign(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tensor2d, Idx: LM.tensor2d,
                  Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(N, 128), B)
    m_tile = lm.block_id(0)
    b = lm.block_id(1)
    pairs = lm.cdiv(K, 256)                   # pairs of 128-centroid tiles

    pool = lm.smem(163840)                    # X tile (32 KiB) + 4 centroid stages (32 KiB each)
    sx = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, stage=4, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    x_full = lm.barrier(count=1, prod=[load], cons=[math])
    full = lm.barrier(count=4, prod=[load], cons=[math], pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=math)

    with load:
        sx.tma_load(X, coords=(b, m_tile, 0), barrier=x_full)
        for kt in lm.range(0, 2 * pairs):
            lm.wait(empty, stage=kt % 4)
            sc.tma_load(C, coords=(b, kt, 0), stage=kt % 4, barrier=full)

    with math:
        lm.wait(x_full)
        x_sq = lm.sum_sq(sx, axis=1)              # ||x||² per row, from the tile in SMEM
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = 2 * kp + 1
            # Issued before the waits so their latency hides under the TMA and the MMA.
            c0 = Csq.load(coords=(b, k0), shape=(1, 128), dtype=lm.f32, other=lm.inf)
            c1 = Csq.load(coords=(b, k1), shape=(1, 128), dtype=lm.f32, other=lm.inf)
            lm.wait(full, stage=k0 % 4)
            lm.mma(acc0, sx, sc[k0 % 4], init=True)
            lm.wait(full, stage=k1 % 4)
            lm.mma(acc1, sx, sc[k1 % 4], init=True)
            lm.argmin(best_d, best_i, c0 - 2.0 * acc0, axis=1, base=k0 * 128, init=(kp == 0))
            lm.commit(empty, stage=k0 % 4)
            lm.argmin(best_d, best_i, c1 - 2.0 * acc1, axis=1, base=k1 * 128)
            lm.commit(empty, stage=k1 % 4)
        Idx.store(best_i, coords=(b, m_tile))
        Dist.store(best_d + x_sq, coords=(b, m_tile))
