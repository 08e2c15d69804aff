# Near miss of CAKE-S004 and CAKE-S021: reading a register accumulator waits for the wgmma
# that wrote it (and, groups completing in order, every earlier one), so a plain
# `lm.arrive` after the read may release the stage that MMA read; the per-column vector comes
# from the stage of the MMA's operand. Verifies clean; arrive_before_acc_read.cake moves the
# arrive above the read, companion_other_tile.test reads the vector of another stage.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tma2d, Idx: LM.tensor2d, K: LM.i32):
    pool = lm.smem(83968)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=81920, shape=(1, 128), dtype=lm.f32, stage=4, swizzle=None)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    pipe = lm.pipeline(stages=4)
    x_full = lm.barrier(count=1, prod=[load], cons=[math])
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=math)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=x_full)
        for kt in lm.range(0, lm.max(lm.cdiv(K, 128), 1)):
            lm.wait(empty, stage=kt % 4)
            sc.tma_load(C, coords=(kt, 0), stage=kt % 4, barrier=full)
            scq.tma_load(Csq, coords=(0, kt), stage=kt % 4, barrier=full, fill=lm.nan)
    with math:
        lm.wait(x_full)
        for kt in lm.range(0, lm.max(lm.cdiv(K, 128), 1)):
            lm.wait(full, stage=kt % 4)
            lm.mma(acc, sx, sc[kt % 4], init=True)
            lm.argmin(best_d, best_i, scq[kt % 4].load() - 2.0 * acc, axis=1, base=kt * 128,
                      init=(kt == 0))
            lm.arrive(empty, stage=kt % 4)
        Idx.store(best_i, coords=(0, 0))
