# Flash-KMeans assignment on Blackwell (sm_100a / sm_103a): idx[b, i] = argmin_j ||x_i - c_j||²,
# dist[b, i] = that squared distance, for X [B, N, D] and C [B, K, D] bf16 (D ≤ 128, D % 8 ==
# 0); the same kernel as examples/kmeans_assign.cake with the scores in Tensor Memory.
#
# ||x - c||² = ||x||² + ||c||² - 2⟨x, c⟩: the cross term is a tcgen05.mma GEMM with D as its K
# dimension, so the N×K distance matrix never leaves TMEM and registers.
# * One CTA per (128-row block of X, batch). A TMA warp loads X's tile once and streams the
#   batch's centroids through a 4-stage ring of 128×D tiles, each with its 128 values of ||c||²
#   (examples/kmeans_csq.cake computes them once per call). X, C and Csq are TMA tensors, so a
#   box never reaches into the next batch: rows past N or K read zeros and ||c||² past K reads
#   NaN (fill=lm.nan), which never wins a minimum.
# * One thread of the MMA warp issues tcgen05.mma m128n128k16 × D/16 per centroid tile into
#   one of two TMEM accumulators (128 columns each), alternating, so the next tile's MMA runs
#   while the epilogue reads this one; acc_full / acc_empty hand each accumulator back and
#   forth. Centroid tiles go in pairs; an odd tile count loads one all-zero tile past K.
# * A 4-warp epilogue, one warp per TMEM lane quarter: each thread owns one row of X. Per tile
#   it reads its row of scores with tcgen05.ld and the stage's ||c||² with broadcast
#   ld.shared (32 columns at a time, so no thread holds all 128), computes ||c||² − 2⟨x, c⟩
#   with one FFMA per element and keeps a running (min, index) with strict `<` in increasing
#   column order (lowest index on ties). ||x||² comes from the X tile in SMEM and is added
#   once, to the final distance.
# * A ring stage has two readers: the MMA (its tcgen05.commit on `empty` fires once the MMA
#   has read the centroid tile) and the epilogue (its ||c||², read after that commit). So
#   `empty` has both as producers, init_count=2: the stage is refilled once both are done.
#   The epilogue waits on `full` itself before reading ||c||²: the PTX ISA does not say that
#   a tcgen05.commit arrival (the MMA role's, on acc_full) makes a TMA load's writes visible
#   to other threads, so that order alone is rejected (CAKE-S002).
@cake.schedule(target="sm_100a")
def kmeans_assign_sm100(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                        Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(N, 128), B)
    m_tile = lm.block_id(0)
    b = lm.block_id(1)
    pairs = lm.max(lm.cdiv(K, 256), 1)        # pairs of 128-centroid tiles (≥ 1: K = 0 stores +inf)

    pool = lm.smem(165888)                    # X (32 KiB), 4 stages: C (32 KiB) + ||c||² (512 B)
    sx = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=163840, shape=(1, 128), dtype=lm.f32, stage=4, swizzle=None)
    acc0 = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    acc1 = lm.tmem(cols=128, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epilogue = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=4)
    x_full = lm.barrier(count=1, prod=[load], cons=[mma, epilogue])
    full = lm.barrier(count=4, prod=[load], cons=[mma, epilogue], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[mma, epilogue], cons=[load], init_count=2, pipeline=pipe)
    acc_full = lm.barrier(count=2, prod=[mma], cons=[epilogue])      # one per accumulator
    acc_empty = lm.barrier(count=2, prod=[epilogue], cons=[mma])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epilogue)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epilogue)

    with load:
        sx.tma_load(X, coords=(b, m_tile, 0), barrier=x_full)
        for kt in lm.range(0, 2 * pairs):
            lm.wait(empty, stage=kt % 4)
            sc.tma_load(C, coords=(b, kt, 0), stage=kt % 4, barrier=full)
            scq.tma_load(Csq, coords=(b, kt), stage=kt % 4, barrier=full, fill=lm.nan)

    with mma:
        lm.wait(x_full)
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = 2 * kp + 1
            lm.wait(acc_empty, stage=0)           # the epilogue has read acc0's last tile
            lm.wait(full, stage=k0 % 4)
            lm.mma(acc0, sx, sc[k0 % 4], init=True)
            lm.commit(empty, stage=k0 % 4)
            lm.commit(acc_full, stage=0)
            lm.wait(acc_empty, stage=1)
            lm.wait(full, stage=k1 % 4)
            lm.mma(acc1, sx, sc[k1 % 4], init=True)
            lm.commit(empty, stage=k1 % 4)
            lm.commit(acc_full, stage=1)

    with epilogue:
        lm.wait(x_full)
        x_sq = lm.sum_sq(sx, axis=1)              # ||x||² of this thread's row, from SMEM
        for kp in lm.range(0, pairs):
            k0 = 2 * kp
            k1 = 2 * kp + 1
            lm.wait(acc_full, stage=0)
            lm.wait(full, stage=k0 % 4)
            lm.argmin(best_d, best_i, scq[k0 % 4].load() - 2.0 * acc0, axis=1, base=k0 * 128,
                      init=(kp == 0))
            lm.arrive(acc_empty, stage=0)
            lm.arrive(empty, stage=k0 % 4)
            lm.wait(acc_full, stage=1)
            lm.wait(full, stage=k1 % 4)
            lm.argmin(best_d, best_i, scq[k1 % 4].load() - 2.0 * acc1, axis=1, base=k1 * 128)
            lm.arrive(acc_empty, stage=1)
            lm.arrive(empty, stage=k1 % 4)
        Idx.store(best_i, coords=(b, m_tile))
        Dist.store(best_d + x_sq, coords=(b, m_tile))
