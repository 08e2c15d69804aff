# CAKE-H020: an (M, N) stage read into registers is held packed (two bf16 columns per register),
# which only the wgmma layout of sm_90a lowers: refused at verify on the mma.sync targets.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def k(lm, X: LM.tensor2d, Y: LM.tensor2d):
    pool = lm.smem(16384)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sx.copy_load(X, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        x = sx[0].load()
        Y.store(x.to(lm.f32) * 2.0, coords=(0, 0))
# CHECK: stage_load_block_sm80.cake:15:13: error: an (M, N) stage read into registers (`view[s].load()`, held packed, two columns per register) is lowered only in the wgmma layout of sm_90a, not on sm_80 [CAKE-H020]
# CHECK-NEXT: {{^}}        x = sx[0].load()
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~
# CHECK: help: read the tile from global memory where it is used (`T.load(coords, shape, dtype)`), or target sm_90a
# CHECK-NOT: error
