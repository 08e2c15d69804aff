# CAKE-T007: per-row vectors of a 64-row tile against a 128-row accumulator.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor2d, K: LM.i32):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    s64 = pool.view(offset=32768, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
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
        x_sq = lm.sum_sq(s64, axis=1)
        lm.argmin(best_d, best_i, acc + c_sq - x_sq, axis=1)
# CHECK: broadcast.cake:23:35: error: tile shapes (128, 128) and (64, 1) do not broadcast [CAKE-T007]
# CHECK-NEXT: {{^}}        lm.argmin(best_d, best_i, acc + c_sq - x_sq, axis=1)
# CHECK-NEXT: {{^}}                                  ^~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: each dimension must agree or be 1: (M, 1) per row, (1, N) per column
# CHECK-NOT: error
