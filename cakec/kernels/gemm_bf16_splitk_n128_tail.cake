# Decode split-K with 64×128 tiles, only the last wave's tiles split: gemm_bf16_splitk_n128.cake's
# tiles and 8-stage ring (C = A · Bᵀ, A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation,
# bf16 out; any M, N, K ≥ 1 with K % 8 == 0, any S) over gemm_bf16_splitk_swap_tail.cake's
# work decomposition: the tiles of whole waves of SMs run unsplit and stored directly, the
# tiles of the partial last wave are cut into S parts (routes.tail_parts), so no CTA runs
# more than one split unit, after its whole ones. E.g. 200×14336×4096 is 448 tiles: 3 waves
# of 64 stages and 104 units of 32, against 4 waves of 64 for the one-wave split (S = 1).
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_n128_tail(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                               L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 64)
    tiles_n = lm.cdiv(N, 128)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    tiles = tiles_m * tiles_n
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one tail part
    whole = (tiles // lm.sm_count()) * lm.sm_count()   # tiles of whole waves: not split
    lm.grid(lm.min(whole + (tiles - whole) * parts, lm.sm_count()))
    full = (tiles // lm.num_blocks(0)) * lm.num_blocks(0)   # the same, from the grid
    units = full + (tiles - full) * parts
    waves = full // lm.num_blocks(0)             # whole units of every CTA

    pool = lm.smem(196608)                       # 8 stages × (8 KiB of A + 16 KiB of B)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=8, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=8, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=8)
    fill = lm.barrier(count=8, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=8, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            i = u // lm.num_blocks(0)
            t = lm.max(u - full, 0)              # the unit's index among the tail's parts
            split = lm.min(lm.max(u - full + 1, 0), 1)   # 1 for a tail part, 0 for a whole tile
            tile = lm.min(u, full) + t // parts
            part = t - (t // parts) * parts
            steps = k_tiles + split * (per - k_tiles)
            base = lm.min(i, waves) * k_tiles + lm.max(i - waves, 0) * per
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, steps):
                s = (base + k) % 8
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=fill)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=fill)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            i = u // lm.num_blocks(0)
            t = lm.max(u - full, 0)              # the unit's index among the tail's parts
            split = lm.min(lm.max(u - full + 1, 0), 1)   # 1 for a tail part, 0 for a whole tile
            tile = lm.min(u, full) + t // parts
            part = t - (t // parts) * parts
            steps = k_tiles + split * (per - k_tiles)
            base = lm.min(i, waves) * k_tiles + lm.max(i - waves, 0) * per
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, steps):
                s = (base + k) % 8
                lm.wait(fill, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part, parts=1 + split * (parts - 1),
                          workspace=W, counters=L, dtype=lm.bf16)
