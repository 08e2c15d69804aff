# One expression that reads two accumulators reads (and retires) both: `O.store(x + acc)` in the
# loop counts as the read of `acc` before the next trip starts it afresh (no CAKE-S023) and as the
# retirement of the `x` wgmma, which reads `ss`, before the next trip's store into `ss` (no
# CAKE-S041). The verifier used to record only the expression's first accumulator (`x`: S023 on
# `acc`; with `acc + x`: S041 on the store). The emitted read waits for both groups.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# CHECK: // acc_read_two_ok.cake:33: O.store(x + acc, coords=(i, 0))
# CHECK-NEXT: cake_wgmma_wait<0>();
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
            O.store(x + acc, coords=(i, 0))
