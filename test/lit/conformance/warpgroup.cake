# wgmma runs on whole warpgroups: warps 2..5 straddle two of them.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64), lm.cdiv(N, 128))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(73728)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=3)
    sb = pool.view(offset=24576, shape=(128, 64), dtype=lm.bf16, stage=3)

    load = lm.role(warps=[0])
    math = lm.role(warps=[2, 3, 4, 5])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 3, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
# CHECK: warpgroup.cake:15:12: error: role `math` issues wgmma, which runs on whole warpgroups, but its warps [2, 3, 4, 5] are not groups of 4 consecutive warps starting at a multiple of 4 [CAKE-H005]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[2, 3, 4, 5])
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: warpgroup.cake:30:13: note: wgmma is issued here
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give role `math` aligned warps, e.g. [4, 5, 6, 7]
