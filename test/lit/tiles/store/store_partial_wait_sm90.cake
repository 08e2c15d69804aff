# view[s].store on sm_90a waits only for the wgmma groups up to the newest one in its block that
# reads the view: `x` reads `ss`, then two groups that do not (`acc`, `y`) were committed, so the
# store retires all but those two (wait_group 2); reading `acc` then retires all but `y`
# (wait_group 1), and `y` runs under the store (the KDA state pass hands S over this way).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def partial(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
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
    y = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        ss[0].store(sa[0].load())
        lm.fence_proxy()
        lm.mma(x, ss[0], sd[0], init=True)
        lm.mma(acc, sa[0], sb[0], init=True)
        lm.mma(y, sa[0], sd[0], init=True)
        ss[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        O.store(x + y, coords=(0, 0))
# CHECK: // store_partial_wait_sm90.cake:32: ss[0].store(acc.to(lm.bf16))
# CHECK-NEXT: cake_wgmma_wait<2>();  // no wgmma of this role still reads the view
# CHECK-NEXT: cake_wgmma_wait<1>();
# CHECK: // store_partial_wait_sm90.cake:34: O.store(x + y, coords=(0, 0))
# CHECK-NEXT: cake_wgmma_wait<0>();
