# CAKE-D002: tiles are loaded as f32, i32, bf16 or f16.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor2d, K: LM.i32):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=math)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        c_sq = Csq.load(coords=(0, 0), shape=(1, 128), dtype=lm.f32, other=lm.inf)
        t = Idx.load(coords=(0, 0), shape=(1, 128), dtype=lm.e4m3)
# CHECK: load_dtype.cake:21:59: error: `load` reads f32, i32, bf16, f16 tiles, not e4m3 [CAKE-D002]
# CHECK-NEXT: {{^}}        t = Idx.load(coords=(0, 0), shape=(1, 128), dtype=lm.e4m3)
# CHECK-NEXT: {{^}}                                                          ^~~~~~~
# CHECK-NOT: error
