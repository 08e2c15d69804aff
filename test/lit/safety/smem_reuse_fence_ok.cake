# Near miss of smem_reuse_fence.cake: the fence after the last generic store of `sx`.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tma2d, K: LM.tma2d, O: LM.tensor2d, n: LM.i32):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    math = lm.role(warps=[0, 1, 2, 3])
    full = lm.barrier(count=1, prod=[math], cons=[math], init_count=2)
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        for i in lm.range(0, n):
            sk.tma_load(K, coords=(i, 0), barrier=full)
            sq.tma_load(Q, coords=(i, 0), barrier=full)
            lm.wait(full)
            lm.mma(s, sq[0], sk[0], init=True)
            sx[0].store(s.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
            O.store(o.to(lm.bf16), coords=(i, 0))
            sx[0].store(o.to(lm.bf16))
            O.store(sx[0].load(), coords=(i, 1))
            lm.fence_proxy()
