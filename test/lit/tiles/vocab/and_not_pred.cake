# CAKE-T007: `and`/`or` combine predicate tiles.
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
        O.store(lm.where(acc > 0.0 and acc, acc, 0.0), coords=(0, 0))
# CHECK: and_not_pred.cake:19:40: error: `and` combines predicate tiles (comparisons); this operand is an f32 tile [CAKE-T007]
# CHECK-NEXT: {{^}}        O.store(lm.where(acc > 0.0 and acc, acc, 0.0), coords=(0, 0))
# CHECK-NEXT: {{^}}                                       ^~~
# CHECK-NEXT: and_not_pred.cake:11:5: note: `acc` is a register tile, declared here
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}    ^~~
# CHECK-NOT: error
