# CAKE-D002: lm.max of an i32 tile and a float.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def imax(lm, X: LM.tma2d, W: LM.tma2d, R: LM.tensor2d):
    pool = lm.smem(32768)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=8192, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        best = acc.argmax(axis=1)
        R.store(lm.max(best, 0.5), coords=(0, 0))
# CHECK: extremum_i32_float.cake:19:30: error: an i32 tile is combined with an integer, not a float [CAKE-D002]
# CHECK-NEXT: {{^}}        R.store(lm.max(best, 0.5), coords=(0, 0))
# CHECK-NEXT: {{^}}                             ^~~
# CHECK-NOT: error
