# CAKE-S061: an MMA reads `sk` after the store into `sx` overwrote its bytes: it would
# read `sx`'s data.
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
        sx[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        O.store(o.to(lm.bf16), coords=(0, 0))
        lm.mma(s, sq[0], sk[0], init=True)
        O.store(s.to(lm.bf16), coords=(0, 1))
# CHECK: smem_reuse_stale_read.cake:22:9: error: role math reads sk[0] at line 22, but the last write of those bytes is the `store` into `sx` at line 18: `sx` reuses the bytes of `sk`, so this reads `sx`'s data [CAKE-S061]
# CHECK-NEXT: {{^}}        lm.mma(s, sq[0], sk[0], init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_stale_read.cake:18:9: note: `sx` is written here
# CHECK-NEXT: {{^}}        sx[0].store(s.to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_stale_read.cake:9:10: note: `sx` is declared here to reuse the bytes of `sk`
# CHECK-NEXT: {{^}}    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: write sk[0] before reading it, and read `sx` only until `sk` is written
