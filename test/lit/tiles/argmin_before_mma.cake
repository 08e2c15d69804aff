# CAKE-S013 through lm.argmin: the accumulator it reduces was never written by an MMA.
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
        lm.argmin(best_d, best_i, 2.0 * acc, axis=1, init=True)
        lm.mma(acc, sx, sc, init=True)
# CHECK: argmin_before_mma.cake:19:9: error: role math reads `acc` at line 19 but no MMA has written it [CAKE-S013]
# CHECK-NEXT: {{^}}        lm.argmin(best_d, best_i, 2.0 * acc, axis=1, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: argmin_before_mma.cake:11:11: note: `acc` is declared here
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: make sure an MMA with init=True runs first; a K loop that may run 0 times needs at least one iteration, e.g. `lm.max(lm.cdiv(K, 64), 1)`
# CHECK-NOT: error
