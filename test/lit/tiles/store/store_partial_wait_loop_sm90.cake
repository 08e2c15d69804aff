# view[s].store's partial wgmma wait on sm_90a around loops: in the body, the walk back stops at
# the body's start, so the store retires all but the `acc` group issued before it this trip
# (wait_group 1): the previous trip's `x`, which reads `ss`, is older (and was retired by the
# store of O, as the safety gate asks). After the loop the walk stops at the loop itself
# (wait_group 0: its MMAs may read the view).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def partial_loop(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
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
        ss[0].store(sa[0].load())
        lm.fence_proxy()
        for i in lm.range(0, 4):
            lm.mma(acc, sa[0], sb[0], init=True)
            ss[0].store(sb[0].load())
            lm.fence_proxy()
            lm.mma(x, ss[0], sd[0], init=True)
            O.store(acc, coords=(i, 0))
            O.store(x, coords=(i, 1))
        ss[0].store(sd[0].load())
        lm.fence_proxy()
# CHECK: // store_partial_wait_loop_sm90.cake:31: ss[0].store(sb[0].load())
# CHECK: cake_wgmma_wait<1>();  // no wgmma of this role still reads the view
# CHECK: // store_partial_wait_loop_sm90.cake:36: ss[0].store(sd[0].load())
# CHECK: cake_wgmma_wait<0>();  // no wgmma of this role still reads the view
