# `cakec emit` verifies first and refuses a kernel that fails: the diagnostics, exit 1, no code.
# RUN: not cakec emit %s --target sm_90a 2>&1 | filecheck %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, K: LM.i32):
    pool = lm.smem(16384)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=1, swizzle=128b)
    load = lm.role(warps=[0])
    full = lm.barrier(count=1, prod=[load], cons=[load], init_count=1)
    with load:
        sa.tma_load(A, coords=(0, 0), stage=0, barrier=fulll)
# CHECK: refuses_unverified.cake:10:56: error: undefined name `fulll` [CAKE-T001]
# CHECK-NEXT: {{^}}        sa.tma_load(A, coords=(0, 0), stage=0, barrier=fulll)
# CHECK-NEXT: {{^}}                                                       ^~~~~
# CHECK-NEXT: help: did you mean `full`?
# CHECK-NOT: extern "C"
