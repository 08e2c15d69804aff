# CAKE-D001 found by the frontend: one tensor parameter loaded into views of two dtypes.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.f16)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[mma])
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(A, coords=(0, 1), barrier=full)
# CHECK: tensor_dtype.cake:13:9: error: tensor `A` is used as f16 here but as bf16 elsewhere [CAKE-D001]
# CHECK-NEXT: {{^}}        sb.tma_load(A, coords=(0, 1), barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tensor_dtype.cake:12:9: note: used as bf16 here
# CHECK-NEXT: {{^}}        sa.tma_load(A, coords=(0, 0), barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NOT: error
