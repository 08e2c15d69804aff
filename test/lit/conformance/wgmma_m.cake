# wgmma computes 64-row slices per warpgroup: M=192 does not split over the two
# warpgroups of role `math`.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 192), lm.cdiv(N, 256))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(114688)
    sa = pool.view(offset=0, shape=(192, 64), dtype=lm.bf16, stage=2)
    sb = pool.view(offset=49152, shape=(256, 64), dtype=lm.bf16, stage=2)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(192, 256), dtype=lm.f32, role=math)

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
# CHECK: wgmma_m.cake:31:13: error: wgmma on sm_90a computes M in slices of 64 rows per warpgroup, and accumulator `acc` has M=192, which does not split over the issuing role's 2 warpgroup(s) [CAKE-H004]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: wgmma_m.cake:20:11: note: `acc` is declared here with shape (192, 256)
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(192, 256), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: make M a multiple of 128
