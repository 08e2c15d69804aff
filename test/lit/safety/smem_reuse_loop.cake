# CAKE-S061 around a loop: the next iteration's store into `sk` comes while the MMA that
# reads `sx` (in `sk`'s bytes) may still read them; reading `o` inside the loop would retire it.
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
        for i in lm.range(0, 4):
            sk[0].store(K.load(coords=(i, 0), shape=(64, 128), dtype=lm.bf16))
            sq[0].store(Q.load(coords=(i, 0), shape=(64, 128), dtype=lm.bf16))
            lm.fence_proxy()
            lm.mma(s, sq[0], sk[0], init=True)
            sx[0].store(s.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(o, s.to(lm.bf16), sx[0].T, init=(i == 0))
        O.store(o.to(lm.bf16), coords=(0, 0))
# CHECK: smem_reuse_loop.cake:15:13: error: `sx` reuses the bytes of `sk`, but an access of one is not ordered after the other's has completed: role math overwrites sk[0] with `store` at line 15 while its own MMA at line 21 may still read it asynchronously [CAKE-S061]
# CHECK-NEXT: {{^}}            sk[0].store(K.load(coords=(i, 0), shape=(64, 128), dtype=lm.bf16))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_loop.cake:21:13: note: this MMA reads the stage asynchronously
# CHECK-NEXT: {{^}}            lm.mma(o, s.to(lm.bf16), sx[0].T, init=(i == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_loop.cake:9:10: note: `sx` is declared here to reuse the bytes of `sk`
# CHECK-NEXT: {{^}}    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: retire the MMA first: `lm.commit` its group to a barrier (and, on sm_100a, wait on that barrier) or read its accumulator before the store, or store into another stage; or place `sx` in bytes that no live view holds
