# sm_100a reads a `view[s].load()` stage where its `lm.argmin` stands, not at the `load()`. The
# safety gate checked the read at the `load()`, so a release between the two (after which the
# producer may refill the stage) is refused (CAKE-H100), never lowered to a racing read: by
# `cakec verify` (verify-lowering), so nothing that verifies fails to emit, and by `cakec emit`.
# RUN: not cakec verify %s 2>&1 | filecheck %s
# RUN: not cakec emit %s --emit cuda 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tma2d, Idx: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    scq = pool.view(offset=32768, shape=(1, 64), dtype=lm.f32, swizzle=None)
    acc = lm.tmem(cols=0, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma, epi], init_count=3)
    free = lm.barrier(count=1, prod=[epi], cons=[load])
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
        scq.tma_load(Csq, coords=(0, 0), barrier=full, fill=lm.nan)
        lm.wait(free)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        lm.commit(done)
    with epi:
        lm.wait(full)
        c_sq = scq[0].load()
        lm.arrive(free)
        lm.wait(done)
        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
        Idx.store(best_i, coords=(0, 0))
# CHECK: stage_load_sm100_release.cake:33:16: error: `view[s].load()` read by an `lm.argmin` after a barrier release or a load between them is not yet supported for sm_100a code generation [CAKE-H100]
# CHECK-NEXT: c_sq = scq[0].load()
# CHECK-NOT: error
# CHECK-NOT: Traceback
