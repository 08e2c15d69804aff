# CAKE-H015: a TMEM accumulator named in tile arithmetic is a tcgen05.ld like `acc.to(...)`,
# so the role reading it must cover every TMEM lane quarter of its rows.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5])
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
        lm.wait(done)
        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
        Idx.store(best_i, coords=(0, 0))
# CHECK: tmem_operand_lanes.cake:27:48: error: role `epi` reads TMEM region `acc` (tcgen05.ld), but a warp reads only the lane quarter of its index mod 4 and no warp of `epi` reaches lanes 64-95 and 96-127 [CAKE-H015]
# CHECK-NEXT: {{^}}        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
# CHECK-NEXT: {{^}}                                               ^~~
# CHECK: help: give role `epi` 4 consecutive warps, one per lane quarter
# CHECK-NOT: error
