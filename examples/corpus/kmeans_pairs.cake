# The k-means assignment of examples/kmeans_assign.cake in its earlier schedule (128-row
# blocks, one CTA each, no persistence): two accumulators per warpgroup, the MMA running one
# centroid tile ahead of the epilogue. Kept because it exercises what that needs: an
# accumulator read retiring only its own wgmma group (wait_group 1), the next tile's MMA
# issued under `if kp + 1 < pairs:` (predicated wgmmas, test/distilled/wgmma_in_branch.test),
# ||c||² staged with each tile. On the H200 it ran the evaluation shape in 1.27-1.35 ms,
# against 1.03 ms for the persistent 256-row schedule that replaced it.
#
# * X tile loaded once; centroid tiles stream through a 4-stage TMA ring with their ||c||²
#   (NaN past K: never wins). Tiles go in pairs (odd counts load one tile past K, all NaN).
# * Score = ||c||² − 2⟨x, c⟩, one FFMA per element; the running (min, index) of each row is
#   merged across the quad when stored; reading an accumulator retires the MMA that read a
#   stage, so the stage goes back with a plain `lm.arrive` after its ||c||² is read too.
@cake.schedule(target="sm_90a")
def kmeans_pairs(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
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
