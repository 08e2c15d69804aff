# CAKE-S002: `lm.sum_sq` reads its SMEM stage synchronously, so reading it before the wait on
# the barrier its TMA load completes is a race, like an MMA operand read would be.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma3d, Csq: LM.tensor2d):
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    c_full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sc.tma_load(C, coords=(0, 0, 0), barrier=c_full)
    with math:
        Csq.store(lm.sum_sq(sc, axis=1), coords=(0, 0))
        lm.wait(c_full)
# CHECK: sum_sq_before_wait.cake:14:19: error: role math reads sc[0] at line 14 before the TMA load that fills it (line 12, completing phase 0 of c_full[0]) is known to be complete [CAKE-S002]
# CHECK-NEXT: {{^}}        Csq.store(lm.sum_sq(sc, axis=1), coords=(0, 0))
# CHECK-NEXT: {{^}}                  ^~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: note: role load fills sc[0] here
# CHECK: help: add `lm.wait(c_full, stage=...)` for that stage before line 14
# CHECK-NOT: error
