# CAKE-T010: reductions run along each row (axis=1) or column (axis=0, not for argmax/argmin).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, W: LM.tma2d, C: LM.tma2d, Bias: LM.tensor2d, O: LM.tensor2d, R: LM.tensor2d, N: LM.i32, T: LM.i32):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    m_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        R.store(acc.argmax(axis=0), coords=(0, 0))
        R.store(acc.sum(axis=2), coords=(0, 0))
# CHECK: reduce_axis.cake:19:33: error: `.argmax` reduces along axis=1 (each row), got axis=0 [CAKE-T010]
# CHECK-NEXT: {{^}}        R.store(acc.argmax(axis=0), coords=(0, 0))
# CHECK-NEXT: {{^}}                                ^
# CHECK-NEXT: help: `argmax`/`argmin` run along each row: load or compute the tile with the reduced dimension as its columns
# CHECK: reduce_axis.cake:20:30: error: `.sum` reduces along axis=1 (each row) or axis=0 (each column), got axis=2 [CAKE-T010]
# CHECK-NEXT: {{^}}        R.store(acc.sum(axis=2), coords=(0, 0))
# CHECK-NEXT: {{^}}                             ^
# CHECK-NOT: error
