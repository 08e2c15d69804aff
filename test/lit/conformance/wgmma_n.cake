# wgmma's N is 8..256 in steps of 8: N=100 has no instruction.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 100))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(29184)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=1)
    sb = pool.view(offset=16384, shape=(100, 64), dtype=lm.bf16, stage=1)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=1)
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=1, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 100), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 1)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 1, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 1, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 1)
            lm.mma(acc, sa[k % 1], sb[k % 1], init=(k == 0))
            lm.commit(empty, stage=k % 1)
# CHECK: wgmma_n.cake:30:13: error: wgmma on sm_90a takes N = 8..256 in steps of 8, and accumulator `acc` has N=100 [CAKE-H004]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 1], sb[k % 1], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: wgmma_n.cake:19:11: note: `acc` is declared here with shape (128, 100)
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(128, 100), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: split the accumulator along N
