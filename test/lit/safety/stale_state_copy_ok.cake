# Near miss of CAKE-S043 (stale_state_copy.cake): the state is staged after its update, and
# the updating iteration itself reads the old copy after issuing the update (O = Q̃·S_old, as
# the chunked KDA prefill does): nothing to report.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, O: LM.tensor2d, S: LM.tensor2d, N: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    ss = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        s = 0.0
        ss[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        for n in lm.range(0, N):
            s = s * 0.5
            lm.mma(s, sa, sa)
            lm.mma(o, sa, ss[0], init=True)
            O.store(o, coords=(n, 0))
            ss[0].store(s.to(lm.bf16))
            lm.fence_proxy()
        S.store(s, coords=(0, 0))
