# Hopper GEMM tile: a 4-warp producer and two consumer warpgroups that share the M tile
# (wgmma accumulates in the math role's registers). The math role releases each stage with
# lm.commit, so the release waits for the wgmma group that reads it.
@cake.schedule(target="sm_90a")
def hopper_gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 256))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(147456)                               # 3 x (16 KiB + 32 KiB)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(256, 64), dtype=lm.bf16, stage=3, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

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
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
