# CAKE-H022: wgmma reads tf32 operands K-major only.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def trans(lm, At: LM.tma2d, Bt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.tf32, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.tf32, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(At, coords=(0, 0), barrier=full)
        sb.tma_load(Bt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa.T, sb[0], init=True)
        O.store(acc, coords=(0, 0))
# CHECK: transpose_tf32.cake:17:9: error: `lm.mma` operand `a` (`sa.T`): wgmma reads a transposed (MN-major) operand only for bf16 or f16; `sa` is tf32 [CAKE-H022]
# CHECK-NEXT: {{^}}        lm.mma(acc, sa.T, sb[0], init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: transpose_tf32.cake:6:10: note: `sa` is declared here
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.tf32, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: store `sa` K-major ([M|N, K]) and drop `.T`
# CHECK-NOT: error
