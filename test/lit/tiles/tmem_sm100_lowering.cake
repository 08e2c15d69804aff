# sm_100a lowering of tile expressions over TMEM accumulators (row-per-thread layout): two
# accumulators in one expression are each loaded per 32-column chunk, with one wait::ld for
# both, and an (M, 1) vector is this thread's one register; the store writes its own row.
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Idx: LM.tensor2d, Out: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=64, shape=(128, 64), dtype=lm.f32)
    acc2 = lm.tmem(cols=64, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma, epi], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        lm.mma(acc2, sx, sc, init=True)
        lm.commit(done)
    with epi:
        lm.wait(full)
        x_sq = lm.sum_sq(sx, axis=1)
        lm.wait(done)
        lm.argmin(best_d, best_i, x_sq + acc - acc2 * 0.5, axis=1, base=64, init=True)
        Idx.store(best_i, coords=(0, 0))
        Out.store(best_d * 2.0 - x_sq, coords=(0, 0))
# CHECK: const float x_sq = cake_sum_sq_row_bf16<1u, 16384u, 128u, 7u>(sx, (i32)(32u * (cake_warp % 4u) + cake_lane_id()));
# CHECK: const i32 cake_col = 64;
# CHECK-NEXT: const u32 cake_taddr0 = cake_tmem + ((32u * (cake_warp % 4u)) << 16);
# CHECK-NEXT: const u32 cake_taddr1 = cake_tmem + 64u + ((32u * (cake_warp % 4u)) << 16);
# CHECK: for (int cake_c0 = 0; cake_c0 < 64; cake_c0 += 32) {
# CHECK-NEXT: u32 cake_t0[32];
# CHECK-NEXT: cake_tmem_ld_32x32b_x32(cake_taddr0 + (u32)cake_c0, cake_t0);
# CHECK-NEXT: u32 cake_t1[32];
# CHECK-NEXT: cake_tmem_ld_32x32b_x32(cake_taddr1 + (u32)cake_c0, cake_t1);
# CHECK-NEXT: cake_tmem_wait_ld();
# CHECK-NEXT: cake_fence_regs(cake_t0);
# CHECK-NEXT: cake_fence_regs(cake_t1);
# CHECK: const float cake_s = fmaf(-(__uint_as_float(cake_t1[cake_j])), 0.5f, (x_sq + __uint_as_float(cake_t0[cake_j])));
# CHECK: const i32 cake_v = best_i;
# CHECK: cake_store_row<2, i32>(cake_v, Idx, cake_c, (i32)(32u * (cake_warp % 4u) + cake_lane_id()));
# CHECK: const float cake_v = ((best_d * 2.0f) - x_sq);
# CHECK: cake_store_row<2, float>(cake_v, Out, cake_c,
