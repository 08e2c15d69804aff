# Flash-KMeans assignment for D ≤ 64: examples/kmeans_assign.cake with 64-wide tiles of X and
# C (one 128-byte swizzle atom per row), so a D = 64 problem issues half the wgmmas and moves
# half the bytes of the 128-wide kernel, which would multiply zero padding. Same schedule,
# same vocabulary; examples/kmeans_assign.py picks this kernel when D ≤ 64. Twice the ring
# depth fits in the same shared memory.
@cake.schedule(target="sm_90a")
def kmeans_assign_d64(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tensor2d, Idx: LM.tensor2d,
                      Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(N, 128), B)
    m_tile = lm.block_id(0)
    b = lm.block_id(1)
    pairs = lm.cdiv(K, 256)                   # pairs of 128-centroid tiles

    pool = lm.smem(147456)                    # X tile (16 KiB) + 8 centroid stages (16 KiB each)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=8, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=8)
    x_full = lm.barrier(count=1, prod=[load], cons=[math])
    full = lm.barrier(count=8, prod=[load], cons=[math], pipeline=pipe)
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

    with math:
        lm.wait(x_full)
        x_sq = lm.sum_sq(sx, axis=1)              # ||x||² per row, from the tile in SMEM
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = 2 * kp + 1
            # Issued before the waits so their latency hides under the TMA and the MMA.
            c0 = Csq.load(coords=(b, k0), shape=(1, 128), dtype=lm.f32, other=lm.inf)
            c1 = Csq.load(coords=(b, k1), shape=(1, 128), dtype=lm.f32, other=lm.inf)
            lm.wait(full, stage=k0 % 8)
            lm.mma(acc0, sx, sc[k0 % 8], init=True)
            lm.wait(full, stage=k1 % 8)
            lm.mma(acc1, sx, sc[k1 % 8], init=True)
            lm.argmin(best_d, best_i, c0 - 2.0 * acc0, axis=1, base=k0 * 128, init=(kp == 0))
            lm.commit(empty, stage=k0 % 8)
            lm.argmin(best_d, best_i, c1 - 2.0 * acc1, axis=1, base=k1 * 128)
            lm.commit(empty, stage=k1 % 8)
        Idx.store(best_i, coords=(b, m_tile))
        Dist.store(best_d + x_sq, coords=(b, m_tile))
