# CAKE-H100: an (M, 1) vector stored into an SMEM stage is not lowered (a (1, N) one is:
# test/distilled/stage_store_vector.test).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sr = pool.view(offset=32768, shape=(128, 1), dtype=lm.f32, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        sr[0].store(acc.sum(axis=1))
        O.store(acc, coords=(0, 0))
# CHECK: store_row_vector.cake:20:9: error: `store` of an (M, 1) vector into an SMEM stage is not yet supported for sm_90a code generation [CAKE-H100]
# CHECK-NEXT: {{^}}        sr[0].store(acc.sum(axis=1))
