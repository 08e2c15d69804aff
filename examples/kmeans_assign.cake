# Flash-KMeans assignment on Hopper: idx[b, i] = argmin_j ||x_i - c_j||², dist[b, i] = that
# squared distance, for X [B, N, D] and C [B, K, D] bf16 (D ≤ 128, D % 8 == 0).
#
# ||x - c||² = ||x||² + ||c||² - 2⟨x, c⟩: the cross term is a tensor-core GEMM with D as the
# MMA's K dimension, so the N×K distance matrix never leaves the registers.
# * One CTA per (128-row block of X, batch): X's tile is loaded once, the batch's centroids
#   stream through a 4-stage TMA ring of 128×D tiles, each with its 128 values of ||c||²
#   (examples/kmeans_csq.cake computes them once per call). X, C and Csq are TMA tensors, so
#   a box never reaches into the next batch: centroid rows past K read zeros and their ||c||²
#   reads NaN (fill=lm.nan), which never wins a minimum.
# * Two consumer warpgroups split the 128 rows; each wgmma m64n128k16 × D/16 gives a 64×128
#   f32 score tile per warpgroup in 64 registers per thread. Tiles alternate between two
#   accumulators and the MMA runs one tile ahead: tile k+1's wgmmas are issued before tile k's
#   epilogue, whose accumulator read waits for tile k's group only (wgmma.wait_group 1).
#   Tiles go in pairs (odd counts load one tile past K, all NaN).
#   (Splitting a tile into two 64-wide halves would overlap as well, but m64n64 re-reads X
#   from SMEM twice as often: ~156 B/clk with the TMA writes, over the SM's 128.)
# * Epilogue per centroid tile: score = ||c||² − 2⟨x, c⟩, one FFMA per element (||x||² is
#   the same for every centroid of a row, so it is added once, to the final distance); each
#   thread keeps the running (min, index) of its two rows in registers, tiles visited in
#   increasing index order, and the row's quad merges them (lowest index on ties) only when
#   the result is stored. Reading an accumulator retires the MMA that read the stage, so the
#   stage goes back to the producer with a plain `lm.arrive` once ||c||² has been read too.
@cake.schedule(target="sm_90a")
def kmeans_assign(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                  Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(N, 128), B)
    m_tile = lm.block_id(0)
    b = lm.block_id(1)
    pairs = lm.max(lm.cdiv(K, 256), 1)        # pairs of 128-centroid tiles (K ≥ 1)

    pool = lm.smem(165888)                    # X (32 KiB) + 4 stages of C (32 KiB) + ||c||²
    sx = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=163840, shape=(1, 128), dtype=lm.f32, stage=4, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    x_full = lm.barrier(count=1, prod=[load], cons=[math])
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
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
            scq.tma_load(Csq, coords=(b, kt), stage=kt % 4, barrier=full, fill=lm.nan)

    with math:
        lm.wait(x_full)
        lm.wait(full, stage=0)
        lm.mma(acc0, sx, sc[0], init=True)
        x_sq = lm.sum_sq(sx, axis=1)              # ||x||² per row, under the first MMA
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = k0 + 1
            lm.wait(full, stage=k1 % 4)
            lm.mma(acc1, sx, sc[k1 % 4], init=True)
            lm.argmin(best_d, best_i, scq[k0 % 4].load() - 2.0 * acc0, axis=1, base=k0 * 128,
                      init=(kp == 0))
            lm.arrive(empty, stage=k0 % 4)
            if kp + 1 < pairs:                    # the next pair's first tile, under this epilogue
                lm.wait(full, stage=(k0 + 2) % 4)
                lm.mma(acc0, sx, sc[(k0 + 2) % 4], init=True)
            lm.argmin(best_d, best_i, scq[k1 % 4].load() - 2.0 * acc1, axis=1, base=k1 * 128)
            lm.arrive(empty, stage=k1 % 4)
        Idx.store(best_i, coords=(b, m_tile))
        Dist.store(best_d + x_sq, coords=(b, m_tile))
