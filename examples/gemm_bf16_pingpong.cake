# C = A · Bᵀ on Hopper with ping-pong consumer warpgroups: A [M, K], B [N, K], C [M, N], bf16
# in, f32 accumulation, bf16 out. Any M, N, K ≥ 1 with K % 8 == 0 (TMA needs 16-byte rows);
# tails are handled by TMA's zero fill on loads and by bounds-checked stores.
#
# examples/gemm_bf16.cake splits each 128×256 tile between its two consumer warpgroups, so a
# tile's epilogue stalls both and the tensor cores wait. Here each consumer warpgroup owns
# whole 128×128 tiles (a role of its own, 128 accumulator registers): this CTA's even tiles
# are math0's, its odd tiles math1's. The producer fills one 6-stage ring with tile j's K
# blocks, then tile j+1's; a consumer waits for the positions of its own tiles and passes
# over the other's (`lm.skip`, which keeps its phase bits in step with the ring). The
# mainloops take turns: after its last wait on `full` of a tile, a consumer hands the turn
# to the other (`turn0`/`turn1`), which waits for it before its first wait of the next
# tile, so the other's MMAs are issued behind this one's and run while this one stores its
# tile (the epilogue never idles the tensor cores). The hand-off is also what makes the
# skipped phases safe: a consumer waits for a ring position only once the other has seen
# the one before it complete (CAKE-S042).
@cake.schedule(target="sm_90a")
def gemm_bf16_pingpong(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32,
                       K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(196608)                       # 6 stages × (16 KiB of A + 16 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math0)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math1)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 6
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math0:                                  # this CTA's tiles 0, 2, 4, ...
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)                # this CTA's j-th tile
            if j % 2 == 0:
                group = t // (8 * tiles_n)
                rows = lm.min(tiles_m - group * 8, 8)
                m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
                n_tile = (t - group * 8 * tiles_n) // rows
                if j > 0:
                    lm.wait(turn1)                   # math1 has seen tile j-1's stages land
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 6
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn0)             # the tile's MMAs are issued: math1's turn
                    lm.commit(empty, stage=s)
                C.tma_store(acc0.to(lm.bf16), coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math1's tile

    with math1:                                  # this CTA's tiles 1, 3, 5, ...
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            if j % 2 == 1:
                group = t // (8 * tiles_n)
                rows = lm.min(tiles_m - group * 8, 8)
                m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
                n_tile = (t - group * 8 * tiles_n) // rows
                lm.wait(turn0)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 6
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn1)             # the tile's MMAs are issued: math0's turn
                    lm.commit(empty, stage=s)
                C.tma_store(acc1.to(lm.bf16), coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math0's tile
