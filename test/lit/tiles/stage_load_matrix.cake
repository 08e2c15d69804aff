# CAKE-D002: an (M, N) stage is read into registers as 16-bit pairs or as f32; an i32 tile is not.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.i32, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        v = sx[0].load()
# CHECK: stage_load_matrix.cake:14:13: error: `load` reads (M, N) tile stages of bf16, f16 or f32; `sx` is i32 [CAKE-D002]
# CHECK-NEXT: {{^}}        v = sx[0].load()
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~
# CHECK-NEXT: stage_load_matrix.cake:6:5: note: `sx` is declared here
# CHECK: help: an (M, N) stage is read as 16-bit pairs (convert with `.to(lm.f32)` for arithmetic) or as f32; other tiles are MMA operands
# CHECK-NOT: error
