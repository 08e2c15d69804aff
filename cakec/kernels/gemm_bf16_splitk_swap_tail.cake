# Decode split-K, swap-AB, 256-deep K stages, with only the last wave's tiles split:
# gemm_bf16_splitk_swap_k256.cake's tiles and ring (Cᵀ = B · Aᵀ, A [M, K], B [N, K], C [M, N],
# bf16 in, f32 accumulation, bf16 out; any M, N, K ≥ 1 with K % 8 == 0; correct for any M and
# S, fast below 17 rows) over another work decomposition.
#
# The one-wave split routes give every tile S parts only while tiles · S fits one wave of SMs,
# so a shape of more tiles than SMs runs unsplit, in whole waves and a partial last one:
# 1×28672×4096 is 448 tiles, 3.4 waves, 52 SMs busy in the fourth while 80 idle (4 tiles of
# 64 stages on the critical path against 3.4 on average); 7×11008×4096 is 172 tiles, 1.3
# waves (2 against 1.3). Splitting every tile over several waves instead measured far slower
# (docs/kernels.md, "Multi-wave splits": a unit boundary with a split_store costs ~6-13 µs).
# Here the first whole waves of tiles run unsplit — units 0 .. full-1, full = the tiles of
# whole waves, each stored directly — and only the `tail` tiles of the last wave are cut into
# S parts (S from routes.tail_parts: the one-wave choice for the tail), so every CTA runs its
# whole tiles and then at most one split unit: 448 tiles become 3 waves of 64 stages and 104
# units of 16 stages (4 × 256 deep); 172 tiles one wave and 120 units of 6.
#
# CTA b runs units b, b + G, b + 2G ... (G CTAs): with full a multiple of G, its i-th unit is
# whole for i < full / G, a tail part after. Its ring position at the start of unit i is the
# 256-deep stages of its earlier units, min(i, wf) · k_tiles + max(i - wf, 0) · per.
# W [S, M, N] f32 and L [cdiv(M, 16) · cdiv(N, 64)] i32 from the caller, as for the other
# split kernels; a tail tile's last CTA adds its parts in order.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_swap_tail(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                               L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 16)
    tiles = tiles_m * lm.cdiv(N, 64)
    k_tiles = lm.max(lm.cdiv(K, 256), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # 256-deep K stages of one tail part
    whole = (tiles // lm.sm_count()) * lm.sm_count()   # tiles of whole waves: not split
    lm.grid(lm.min(whole + (tiles - whole) * parts, lm.sm_count()))
    # The same count in device code, from the grid: G = the SM count when tiles >= SMs, else
    # G >= tiles and `full` is 0, or the tiles themselves when parts is 1 (all whole).
    full = (tiles // lm.num_blocks(0)) * lm.num_blocks(0)
    units = full + (tiles - full) * parts
    waves = full // lm.num_blocks(0)             # whole units of every CTA

    pool = lm.smem(204800)                       # 5 stages × 4 × (8 KiB of B + 2 KiB of A)
    sb0 = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb1 = pool.view(offset=40960, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb2 = pool.view(offset=81920, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb3 = pool.view(offset=122880, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa0 = pool.view(offset=163840, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa1 = pool.view(offset=174080, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa2 = pool.view(offset=184320, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa3 = pool.view(offset=194560, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=5)
    fill = lm.barrier(count=5, prod=[load], cons=[math], init_count=8, pipeline=pipe)
    empty = lm.barrier(count=5, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 16), dtype=lm.f32, role=math)   # a tile of Cᵀ

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
                s = (base + k) % 5
                q = (part * per + k) * 4             # the first 64-deep box of this stage
                lm.wait(empty, stage=s)
                sb0.tma_load(B, coords=(n_tile, q), stage=s, barrier=fill)
                sb1.tma_load(B, coords=(n_tile, q + 1), stage=s, barrier=fill)
                sb2.tma_load(B, coords=(n_tile, q + 2), stage=s, barrier=fill)
                sb3.tma_load(B, coords=(n_tile, q + 3), stage=s, barrier=fill)
                sa0.tma_load(A, coords=(m_tile, q), stage=s, barrier=fill)
                sa1.tma_load(A, coords=(m_tile, q + 1), stage=s, barrier=fill)
                sa2.tma_load(A, coords=(m_tile, q + 2), stage=s, barrier=fill)
                sa3.tma_load(A, coords=(m_tile, q + 3), stage=s, barrier=fill)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            i = u // lm.num_blocks(0)
            t = lm.max(u - full, 0)
            split = lm.min(lm.max(u - full + 1, 0), 1)
            tile = lm.min(u, full) + t // parts
            part = t - (t // parts) * parts
            steps = k_tiles + split * (per - k_tiles)
            base = lm.min(i, waves) * k_tiles + lm.max(i - waves, 0) * per
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, steps):
                s = (base + k) % 5
                lm.wait(fill, stage=s)
                lm.mma(acc, sb0[s], sa0[s], init=(k == 0))
                lm.mma(acc, sb1[s], sa1[s])
                lm.mma(acc, sb2[s], sa2[s])
                lm.mma(acc, sb3[s], sa3[s])
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part,
                          parts=1 + split * (parts - 1), workspace=W, counters=L,
                          dtype=lm.bf16, transpose=True)
