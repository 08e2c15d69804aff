# CAKE-D002: a vector stage read into registers is f32 or i32.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d):
    pool = lm.smem(65536)
    sv = pool.view(offset=0, shape=(1, 128), dtype=lm.bf16, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sv.tma_load(X, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        v = sv[0].load()
# CHECK: stage_load_dtype.cake:14:13: error: `load` reads vector stages ((1, L) or (L, 1)) of f32 or i32; `sv` is bf16 [CAKE-D002]
# CHECK-NEXT: {{^}}        v = sv[0].load()
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~
# CHECK-NEXT: stage_load_dtype.cake:6:5: note: `sv` is declared here
# CHECK-NOT: error
