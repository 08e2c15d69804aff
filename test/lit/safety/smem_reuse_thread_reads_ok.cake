# Near miss of smem_reuse_thread_reads.cake: `lm.fence_proxy()` syncs the role between
# the last read of `sk` and the store into `sx`.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    math = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        sk[0].store(K.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        sq[0].store(Q.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        lm.fence_proxy()
        lm.mma(s, sq[0], sk[0], init=True)
        O.store(sk[0].load(), coords=(1, 0))
        lm.fence_proxy()
        sx[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        O.store(o.to(lm.bf16), coords=(0, 0))
