# CAKE-S016 beside a reuse: `sz` overlaps `sk` (and `sx`, which reuses it) without
# declaring `reuses=`: only a declared reuse may share bytes.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    sz = pool.view(offset=4096, shape=(32, 64), dtype=lm.bf16, swizzle=128b)
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
# CHECK: smem_reuse_undeclared.cake:10:10: error: view `sz` (bytes [4096, 8192)) overlaps view `sk` (bytes [0, 16384)) in pool `pool`; both are live for the whole kernel [CAKE-S016]
# CHECK-NEXT: {{^}}    sz = pool.view(offset=4096, shape=(32, 64), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_undeclared.cake:7:10: note: `sk` is declared here
# CHECK-NEXT: {{^}}    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: place `sz` at offset=16384 or later, or declare it with `reuses=sk` where `sk` is dead before `sz` is first used
