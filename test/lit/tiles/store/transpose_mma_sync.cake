# CAKE-H022: mma.sync (sm_80) does not read transposed operands.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def trans80(lm, At: LM.tensor2d, Bt: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16)
    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.copy_load(At, coords=(0, 0), barrier=full)
        sb.copy_load(Bt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa.T, sb[0].T, init=True)
        O.store(acc, coords=(0, 0))
# CHECK: transpose_mma_sync.cake:17:9: error: `lm.mma` operand `a` (`sa.T`): mma.sync on sm_80 does not read a transposed operand (ldmatrix.trans is not lowered) [CAKE-H022]
# CHECK-NEXT: {{^}}        lm.mma(acc, sa.T, sb[0].T, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: transpose_mma_sync.cake:6:10: note: `sa` is declared here
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: store `sa` K-major ([M|N, K]), or target sm_90a or sm_100a
# CHECK-NEXT: transpose_mma_sync.cake:17:9: error: `lm.mma` operand `b` (`sb.T`): mma.sync on sm_80 does not read a transposed operand (ldmatrix.trans is not lowered) [CAKE-H022]
# CHECK-NEXT: {{^}}        lm.mma(acc, sa.T, sb[0].T, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: transpose_mma_sync.cake:7:10: note: `sb` is declared here
# CHECK-NEXT: {{^}}    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: store `sb` K-major ([M|N, K]), or target sm_90a or sm_100a
# CHECK-NOT: error
