# GEMM tile with a runtime K loop: a 3-stage TMA -> tcgen05 ring with full and empty
# barriers, then an epilogue warpgroup that waits for the accumulator and stores it.
# k_tiles is at least 1, so the accumulator is always initialised before the epilogue reads it.
@cake.schedule(target="sm_100a")
def gemm_ring_dynamic(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32,
                      K: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
        lm.commit(acc_full)

    with epi:
        lm.wait(acc_full)
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
