# CAKE-T004: `load` reads one stage of a view; the help names the stage form.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, T: LM.tma2d):
    pool = lm.smem(1024)
    sv = pool.view(offset=0, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=2, prod=[load], cons=[math])
    with load:
        sv.tma_load(T, coords=(0, 0), stage=0, barrier=full)
    with math:
        lm.wait(full, stage=0)
        v = sv.load()
# CHECK: stage_load_on_view.cake:14:13: error: an SMEM view has no method `load` [CAKE-T004]
# CHECK-NEXT: {{^}}        v = sv.load()
# CHECK-NEXT: {{^}}            ^~~~~~~
# CHECK-NEXT: stage_load_on_view.cake:6:5: note: `sv` is declared here
# CHECK: help: `load` reads one stage: `sv[s].load()`
# CHECK-NOT: error
