# sm_100a lowering of `view[s].load()` (row-per-thread layout): the (1, N) stage stays in SMEM
# and `lm.argmin` reads it 32 columns at a time, in the chunk loop of the TMEM loads it combines
# with (one broadcast ld.shared.v4 per 4 columns, issued before tcgen05.wait::ld), so no thread
# copies all N columns into registers. The read moves from the `load()` to the argmin; a wait
# between them changes nothing (only a release or a load there could let the stage change:
# stage_load_sm100_release.cake).
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
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
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
        scq.tma_load(Csq, coords=(0, 0), barrier=full, fill=lm.nan)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        lm.commit(done)
    with epi:
        lm.wait(full)
        c_sq = scq[0].load()
        lm.wait(done)
        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
        Idx.store(best_i, coords=(0, 0))
# CHECK: // stage_load_sm100.cake:{{[0-9]+}}: c_sq = scq[0].load()
# CHECK-NEXT: const u32 c_sq = scq;  // (1, 64) float in SMEM, read 32 columns at a time by its argmin
# CHECK-NOT: c_sq[
# CHECK: cake_mbar_wait(done,
# CHECK: for (int cake_c0 = 0; cake_c0 < 64; cake_c0 += 32) {
# CHECK-NEXT: u32 cake_t0[32];
# CHECK-NEXT: cake_tmem_ld_32x32b_x32(cake_taddr0 + (u32)cake_c0, cake_t0);
# CHECK-NEXT: u32 cake_v0[32];
# CHECK-NEXT: cake_lds_x32(c_sq + 4u * (u32)cake_c0, cake_v0);
# CHECK-NEXT: cake_tmem_wait_ld();
# CHECK-NEXT: cake_fence_regs(cake_t0);
# CHECK: for (int cake_j = 0; cake_j < 32; ++cake_j) {
# CHECK-NEXT: const float cake_s = fmaf(-2.0f, __uint_as_float(cake_t0[cake_j]), __uint_as_float(cake_v0[cake_j]));
