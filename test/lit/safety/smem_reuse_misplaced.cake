# CAKE-S062: a view declared with `reuses=` must lie inside a stage of the view it reuses.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=12288, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
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
# CHECK: smem_reuse_misplaced.cake:8:10: error: view `sx` reuses the bytes of `sk` (bytes [0, 16384) in pool `pool`, 1 stage(s) of 16384 B), but bytes [12288, 20480) are not inside one stage of `sk` [CAKE-S062]
# CHECK-NEXT: {{^}}    sx = pool.view(offset=12288, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_misplaced.cake:6:10: note: `sk` is declared here
# CHECK-NEXT: {{^}}    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: place each stage of `sx` inside its own stage of `sk` (offset=0 fits a stage of at most 16384 B), or drop `reuses=`
