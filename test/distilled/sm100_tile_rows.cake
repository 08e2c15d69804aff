# Found by the rule audit (2026-12-01, issue 17): on sm_100a/sm_103a a role's register tiles
# are one row per thread of its 4 warps (the TMEM lane quarters), 128 rows. A (64, 64) block
# load and store verified and emitted: all 128 threads stored a row, so rows 64..127 of C
# (the next tile's) were written with values read past the tile; a (256, N) tile would have
# lost its second half. docs/codegen.md says tiles of M != 128 rows are CAKE-H100: now they
# are, from `cakec verify`, for every tile and vector of the role.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, W: LM.tma2d, O: LM.tensor2d, R: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        lm.commit(done)
    with epi:
        lm.wait(done)
        O.store(acc.to(lm.bf16), coords=(0, 0))
        R.store(R.load(coords=(0, 0), shape=(64, 64), dtype=lm.f32) * 2.0, coords=(1, 0))
# CHECK: sm100_tile_rows.cake:16:11: error: a 64-row register tile in role `epi` of warps [4, 5, 6, 7] (tiles of 128 rows in a role of 4 warps, one per TMEM lane quarter, are supported) is not yet supported for sm_100a code generation [CAKE-H100]
# CHECK-NEXT: {{^}}    epi = lm.role(warps=[4, 5, 6, 7])
# CHECK: sm100_tile_rows.cake:29:17: error: a 64-row register tile in role `epi`
# CHECK-NEXT: {{^}}        R.store(R.load(coords=(0, 0), shape=(64, 64), dtype=lm.f32) * 2.0, coords=(1, 0))
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
