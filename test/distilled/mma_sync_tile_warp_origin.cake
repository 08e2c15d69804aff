# Distilled from the H200 (2026-12-01): examples/chain_sm80.cake, then with (64, 32) A and B
# blocks in a role whose (64, 64) mma.sync accumulator is split 2 × 2 over its warps, computed
# rel_err 0.92 and racecheck reported write-after-write hazards between its own stores: the
# tiles took the accumulator's warp origins (a warp's block 32 columns in) with their own
# 16-column width, so two warps read and wrote the same bytes and 16 columns were never
# written. A tile split over warps must have the accumulator's extent there: refused at
# verify, not emitted wrong.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def narrow(lm, A: LM.tensor2d, B: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(16384)
    sa = pool.view(offset=0, shape=(64, 32), dtype=lm.bf16)
    sb = pool.view(offset=4096, shape=(64, 32), dtype=lm.bf16)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        a = A.load(coords=(0, 0), shape=(64, 32), dtype=lm.bf16)
        sa[0].store(a.to(lm.bf16))
        sb[0].store(B.load(coords=(0, 0), shape=(64, 32), dtype=lm.bf16).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(acc, sa, sb, init=True)
        O.store(acc, coords=(0, 0))
# CHECK: mma_sync_tile_warp_origin.cake:17:13: error: a tile of 32 columns in a role whose warps split its (64, 64) accumulator 2 × 2 (on mma.sync a tile split over warps takes the accumulator's extent along that dimension) is not yet supported for sm_80 code generation [CAKE-H100]
# CHECK-NEXT: {{^}}        a = A.load(coords=(0, 0), shape=(64, 32), dtype=lm.bf16)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK: mma_sync_tile_warp_origin.cake:19:9: error: a tile of 32 columns in a role whose warps split its (64, 64) accumulator 2 × 2
