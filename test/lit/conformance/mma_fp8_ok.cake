# Near miss: the FP8 kernel on sm_120a (FP8 mma.sync and TMA).
# RUN: cakec verify %s
@cake.schedule(target="sm_120a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64), lm.cdiv(N, 64))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(16384)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.e4m3, stage=2)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.e4m3, stage=2)

    load = lm.role(warps=[0])
    math = lm.role(warps=[1])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)

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
