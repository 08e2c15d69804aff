# gemm_bf16_skinny.cake with 64×64 tiles (12 stages of 8 KiB of A + 8 KiB of B): half the
# tiles of the 64×32 form, so each tile's B rows cost half as many reads of A from L2 (at
# M = 64, a 64×32 tile reads two bytes of A per byte of B). The tuner (`cakec tune`) picks
# between the two per shape bucket. Same contract: any M, N, K ≥ 1 with K % 8 == 0.
@cake.schedule(target="sm_90a")
def gemm_bf16_skinny_n64(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d,
                         M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 64)
    tiles_n = lm.cdiv(N, 64)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(196608)                       # 12 stages × (8 KiB of A + 8 KiB of B)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=12, swizzle=128b)
    sb = pool.view(offset=98304, shape=(64, 64), dtype=lm.bf16, stage=12, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=12)
    full = lm.barrier(count=12, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=12, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m                 # M tiles of one N tile run side by side (L2)
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 12
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 12
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
