# Near miss of acc_read_two_ok.cake: the store reads `x` only, so the next trip's MMA into `acc`
# discards the sums nothing read (CAKE-S023), with both accumulators still checked one by one.
# RUN: not cakec verify %s 2>&1 | filecheck %s
# CHECK: acc_read_two_one_unread.cake:24:13: error: the MMA at line 24 starts `acc` afresh (init=True, i = 1) before anything reads the partial sums of the MMA at line 24 from i = 0: they are discarded [CAKE-S023]
@cake.schedule(target="sm_90a")
def two(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    ss = pool.view(offset=24576, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    x = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        for i in lm.range(0, 4):
            lm.mma(acc, sa[0], sb[0], init=True)
            ss[0].store(sb[0].load())
            lm.fence_proxy()
            lm.mma(x, ss[0], sd[0], init=True)
            O.store(x * 2.0, coords=(i, 0))
