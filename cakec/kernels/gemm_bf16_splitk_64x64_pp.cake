# Decode split-K, ping-pong: gemm_bf16_splitk_decode.cake's 64×64 tiles and 12-stage ring
# (C = A · Bᵀ, A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation, bf16 out; any M, N,
# K ≥ 1 with K % 8 == 0) with two consumer warpgroups taking this CTA's units in turn, as
# gemm_bf16_splitk_swap_pp.cake does for the swap-AB tiles (why: there): one's split_store
# runs under the other's MMAs, so a split of more units than one wave holds keeps the
# weights streaming (64×28672×4096 in 2 parts on one warpgroup: 161 µs against 71 in one).
# Measured (2026-12-04): 124 µs there, still behind one part; it takes no bucket.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_64x64_pp(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                             L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 64)
    tiles_n = lm.cdiv(N, 64)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(196608)                       # 12 stages × (8 KiB of A + 8 KiB of B)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=12, swizzle=128b)
    sb = pool.view(offset=98304, shape=(64, 64), dtype=lm.bf16, stage=12, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=12)
    full = lm.barrier(count=12, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=12, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    acc0 = lm.regs(shape=(64, 64), dtype=lm.f32, role=math0)
    acc1 = lm.regs(shape=(64, 64), dtype=lm.f32, role=math1)

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 12
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=full)

    with math0:                                  # this CTA's units 0, 2, 4, ...
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            j = u // lm.num_blocks(0)                # this CTA's j-th unit
            if j % 2 == 0:
                tile = u // parts
                part = u - tile * parts
                m_tile = tile % tiles_m
                n_tile = tile // tiles_m
                if j > 0:
                    lm.wait(turn1)                   # math1 has issued unit j-1's MMAs
                for k in lm.range(0, per):
                    s = (j * per + k) % 12
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sa[s], sb[s], init=(k == 0))
                    if k == per - 1 and u + lm.num_blocks(0) < units:
                        lm.arrive(turn0)             # the unit's MMAs are issued: math1's turn
                    lm.commit(empty, stage=s)
                C.split_store(acc0, coords=(m_tile, n_tile), part=part, parts=parts,
                              workspace=W, counters=L, dtype=lm.bf16)
            else:
                lm.skip(full, stage=(j * per) % 12, count=per)              # math1's unit

    with math1:                                  # this CTA's units 1, 3, 5, ...
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            j = u // lm.num_blocks(0)
            if j % 2 == 1:
                tile = u // parts
                part = u - tile * parts
                m_tile = tile % tiles_m
                n_tile = tile // tiles_m
                lm.wait(turn0)
                for k in lm.range(0, per):
                    s = (j * per + k) % 12
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sa[s], sb[s], init=(k == 0))
                    if k == per - 1 and u + lm.num_blocks(0) < units:
                        lm.arrive(turn1)             # the unit's MMAs are issued: math0's turn
                    lm.commit(empty, stage=s)
                C.split_store(acc1, coords=(m_tile, n_tile), part=part, parts=parts,
                              workspace=W, counters=L, dtype=lm.bf16)
            else:
                lm.skip(full, stage=(j * per) % 12, count=per)              # math0's unit
