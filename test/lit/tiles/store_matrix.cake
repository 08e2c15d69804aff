# CAKE-T007: `store` writes an (M, N) tile into the last two dimensions of a tensor of rank ≥ 2.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor1d, K: LM.i32):
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
        Csq.store(c_sq * 2.0, coords=(0, 0))
        Idx.store(acc * 2.0, coords=(0,))
# CHECK: store_matrix.cake:22:19: error: `store` of a (128, 128) tile writes a tile of the last two dimensions of a tensor of rank ≥ 2; `Idx` has rank 1 [CAKE-T007]
# CHECK-NEXT: {{^}}        Idx.store(acc * 2.0, coords=(0,))
# CHECK-NEXT: {{^}}                  ^~~~~~~~~
# CHECK-NEXT: store_matrix.cake:4:55: note: declared here
# CHECK-NOT: error
