# CAKE-S008 found by the frontend: a constant stage index outside a view's stages, in a
# subscript and in a TMA load; the note points at the view.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, Q: LM.tma2d):
    pool = lm.smem(98304)
    sq = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=3, prod=[load], cons=[mma])
    with load:
        sq.tma_load(Q, coords=(0, 0), stage=3, barrier=full)
    with mma:
        lm.wait(full, stage=0)
        lm.mma(acc, sq[0], sq[-1], init=True)
# CHECK: stage_range.cake:13:45: error: stage 3 is out of range for view `sq` with 3 stage(s) [CAKE-S008]
# CHECK-NEXT: {{^}}        sq.tma_load(Q, coords=(0, 0), stage=3, barrier=full)
# CHECK-NEXT: {{^}}                                            ^
# CHECK-NEXT: stage_range.cake:7:5: note: `sq` is declared here
# CHECK-NEXT: {{^}}    sq = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}    ^~
# CHECK-NEXT: stage_range.cake:16:31: error: stage -1 is out of range for view `sq` with 3 stage(s) [CAKE-S008]
# CHECK-NEXT: {{^}}        lm.mma(acc, sq[0], sq[-1], init=True)
# CHECK-NEXT: {{^}}                              ^~
# CHECK-NEXT: stage_range.cake:7:5: note: `sq` is declared here
# CHECK-NEXT: {{^}}    sq = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}    ^~
# CHECK-NOT: error
