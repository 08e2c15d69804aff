# CAKE-D002: TMA fills NaN only into floating-point tiles.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, T: LM.tma2d):
    pool = lm.smem(65536)
    sv = pool.view(offset=0, shape=(1, 128), dtype=lm.i32, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sv.tma_load(T, coords=(0, 0), barrier=full, fill=lm.nan)
    with math:
        lm.wait(full)
        v = sv[0].load()
# CHECK: fill_nan_int.cake:11:58: error: fill=lm.nan needs a floating-point view; `sv` is i32 [CAKE-D002]
# CHECK-NEXT: {{^}}        sv.tma_load(T, coords=(0, 0), barrier=full, fill=lm.nan)
# CHECK-NEXT: {{^}}                                                         ^~~~~~
# CHECK-NEXT: fill_nan_int.cake:6:5: note: `sv` is declared here
# CHECK: help: integer tiles can only be zero-filled (omit `fill=`)
# CHECK-NOT: error
