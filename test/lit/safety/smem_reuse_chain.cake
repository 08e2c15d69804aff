# CAKE-S061 along a chain of reuses: `sy` is written while the MMA that reads `sx` (its
# bytes) may still read them.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    sy = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sx)
    math = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        sk[0].store(K.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        sq[0].store(Q.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        lm.fence_proxy()
        lm.mma(s, sq[0], sk[0], init=True)
        sx[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        sy[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(s, s.to(lm.bf16), sy[0].T, init=True)
        O.store(s.to(lm.bf16), coords=(0, 1))
        O.store(o.to(lm.bf16), coords=(0, 0))
# CHECK: smem_reuse_chain.cake:22:9: error: `sy` reuses the bytes of `sx`, but an access of one is not ordered after the other's has completed: role math overwrites sy[0] with `store` at line 22 while its own MMA at line 21 may still read it asynchronously [CAKE-S061]
# CHECK-NEXT: {{^}}        sy[0].store(s.to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_chain.cake:21:9: note: this MMA reads the stage asynchronously
# CHECK-NEXT: {{^}}        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_chain.cake:10:10: note: `sy` is declared here to reuse the bytes of `sx`
# CHECK-NEXT: {{^}}    sy = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sx)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: retire the MMA first: `lm.commit` its group to a barrier (and, on sm_100a, wait on that barrier) or read its accumulator before the store, or store into another stage; or place `sy` in bytes that no live view holds
