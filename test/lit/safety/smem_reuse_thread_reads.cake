# CAKE-D011 through reused bytes: every thread of the role reads `sk` (`sk[0].load()`), then
# stores into `sx` in the same bytes: `sx` lays them out differently, so a warp's store may
# land where another warp is still reading; the role's sync (`lm.fence_proxy()`) must come
# between (smem_reuse_thread_reads_ok.cake).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
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
        sx[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        O.store(o.to(lm.bf16), coords=(0, 0))
# CHECK: smem_reuse_thread_reads.cake:21:9: error: `store` overwrites `sx`, whose bytes the role's other warps may still be reading as `sk` at line 20: `sx` reuses them in another layout, and nothing syncs the role between that read and this write [CAKE-D011]
# CHECK-NEXT: {{^}}        sx[0].store(s.to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_thread_reads.cake:20:17: note: the role's threads read `sk` here
# CHECK-NEXT: {{^}}        O.store(sk[0].load(), coords=(1, 0))
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~
# CHECK-NEXT: help: add `lm.fence_proxy()` (it syncs the role's threads) before the write, after the last read of `sk`
