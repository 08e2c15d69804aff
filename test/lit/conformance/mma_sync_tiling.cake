# mma.sync splits a register accumulator into 16×8 fragments per warp: 3 warps cannot split
# a 64×8 tile (N/8 = 1 column of fragments, M/16 = 4 rows of them).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_120a")
def mma_wgmma_n8_bf16(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64), lm.cdiv(N, 8))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(18432)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=16384, shape=(8, 64), dtype=lm.bf16, stage=2, swizzle=128b)

    math = lm.role(warps=[0, 1, 2])
    load = lm.role(warps=[4])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 8), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 2)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 2, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 2, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
            lm.commit(empty, stage=k % 2)
        C.tma_store(acc, coords=(m_tile, n_tile))
# CHECK: mma_sync_tiling.cake:31:13: error: mma.sync on sm_120a splits accumulator `acc` (64×8) over the warps of role `math` [0, 1, 2], each a block of whole 16×8 fragments, and these warps do not split it [CAKE-H017]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_sync_tiling.cake:20:11: note: `acc` is declared here with shape (64, 8)
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(64, 8), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give `math` consecutive warps whose count divides M/16 × N/8 into a grid, e.g. 1, 2 or 4 warps
