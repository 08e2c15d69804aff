# Flash-KMeans assignment for D ≤ 64: examples/kmeans_assign.cake with 64-wide tiles of X and
# C (one 128-byte swizzle atom per row), so a D = 64 problem issues half the wgmmas and moves
# half the bytes of the 128-wide kernel, which would multiply zero padding. Same schedule,
# same vocabulary; examples/kmeans_assign.py picks this kernel when D ≤ 64. Twice the ring
# depth fits in the same shared memory.
@cake.schedule(target="sm_90a")
def kmeans_assign_d64(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                      Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(N, 128), B)
    m_tile = lm.block_id(0)
    b = lm.block_id(1)
    pairs = lm.max(lm.cdiv(K, 256), 1)        # pairs of 128-centroid tiles (K ≥ 1)

    pool = lm.smem(151552)                    # X (16 KiB) + 8 stages of C (16 KiB) + ||c||²
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=8, swizzle=128b)
    scq = pool.view(offset=147456, shape=(1, 128), dtype=lm.f32, stage=8, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=8)
    x_full = lm.barrier(count=1, prod=[load], cons=[math])
    full = lm.barrier(count=8, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=8, prod=[math], cons=[load], pipeline=pipe)
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=math)

    with load:
        sx.tma_load(X, coords=(b, m_tile, 0), barrier=x_full)
        for kt in lm.range(0, 2 * pairs):
            lm.wait(empty, stage=kt % 8)
            sc.tma_load(C, coords=(b, kt, 0), stage=kt % 8, barrier=full)
            scq.tma_load(Csq, coords=(b, kt), stage=kt % 8, barrier=full, fill=lm.nan)

    with math:
        lm.wait(x_full)
        lm.wait(full, stage=0)
        lm.mma(acc0, sx, sc[0], init=True)
        x_sq = lm.sum_sq(sx, axis=1)              # ||x||² per row, under the first MMA
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = k0 + 1
            lm.wait(full, stage=k1 % 8)
            lm.mma(acc1, sx, sc[k1 % 8], init=True)
            lm.argmin(best_d, best_i, scq[k0 % 8].load() - 2.0 * acc0, axis=1, base=k0 * 128,
                      init=(kp == 0))
            lm.arrive(empty, stage=k0 % 8)
            if kp + 1 < pairs:                    # the next pair's first tile, under this epilogue
                lm.wait(full, stage=(k0 + 2) % 8)
                lm.mma(acc0, sx, sc[(k0 + 2) % 8], init=True)
            lm.argmin(best_d, best_i, scq[k1 % 8].load() - 2.0 * acc1, axis=1, base=k1 * 128)
            lm.arrive(empty, stage=k1 % 8)
        Idx.store(best_i, coords=(b, m_tile))
        Dist.store(best_d + x_sq, coords=(b, m_tile))
