# CAKE-S002: reading a TMEM accumulator in tile arithmetic before waiting for the MMA that
# writes it is a race, caught at the operand like any other read of the accumulator.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        lm.commit(done)
    with epi:
        c_sq = Csq.load(coords=(0, 0), shape=(1, 128), dtype=lm.f32, other=lm.inf)
        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
        Idx.store(best_i, coords=(0, 0))
# CHECK: tmem_operand_race.cake:26:48: error: role epi reads `acc` at line 26 while the MMA at line 22 (role mma) may still write it [CAKE-S002]
# CHECK-NEXT: {{^}}        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
# CHECK-NEXT: {{^}}                                               ^~~
# CHECK-NOT: error
