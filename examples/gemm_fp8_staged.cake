# examples/gemm_fp8.cake with the epilogue a hand-writer would use: each consumer writes its
# scaled bf16 tile into one swizzled 32 KiB SMEM stage (stmatrix) and one thread copies it out
# with TMA stores (clipped at C's edges), instead of 64 bounds-checked 4-byte global stores per
# thread. The ring keeps its 6 stages: the two consumers share the one staging stage, taking
# it in turn (each writes only after the other's copy has read it: the compiler waits for the
# bulk group before the hand-over arrival); the column scales are read from global memory after
# the K loop (their 1 KiB ring would not fit beside the stage), Sb a plain [1, N] tensor. C's
# rows must be 16-byte aligned (N % 8 == 0).
# Timed beside gemm_fp8.cake by bench/gemm_epilogues.py: the store path is the only
# difference.
@cake.schedule(target="sm_90a")
def gemm_fp8_staged(lm, A: LM.tma2d, B: LM.tma2d, Sa: LM.tensor1d, Sb: LM.tensor2d, C: LM.tma2d,
                    M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 128), 1)         # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(229376)                       # 6 × (16 KiB of A + 16 KiB of B) + 32 KiB of C
    sa = pool.view(offset=0, shape=(128, 128), dtype=lm.e4m3, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 128), dtype=lm.e4m3, stage=6, swizzle=128b)
    sc = pool.view(offset=196608, shape=(128, 128), dtype=lm.bf16, stage=1, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    # sc handed back and forth: each arrival comes after the arriving role's copy has read sc
    # (the first wait on each passes: sc starts free)
    c_turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])
    c_turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])
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
                row_scale = Sa.load(coords=(m_tile,), shape=(128, 1), dtype=lm.f32)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 6
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn0)             # the tile's MMAs are issued: math1's turn
                    lm.commit(empty, stage=s)
                col_scale = Sb.load(coords=(0, n_tile), shape=(1, 128), dtype=lm.f32)
                lm.wait(c_turn1)                     # sc is free: math1's copy of tile j-1 has read it
                sc[0].store((acc0 * row_scale * col_scale).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sc[0], coords=(m_tile, n_tile))
                if t + lm.num_blocks(0) < tiles:
                    lm.arrive(c_turn0)               # after the copy has read sc
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math1's tile

    with math1:                                  # this CTA's tiles 1, 3, 5, ...
        lm.skip(c_turn0)                         # sc starts free for math0's tile 0, not for math1
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            if j % 2 == 1:
                group = t // (8 * tiles_n)
                rows = lm.min(tiles_m - group * 8, 8)
                m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
                n_tile = (t - group * 8 * tiles_n) // rows
                lm.wait(turn0)
                row_scale = Sa.load(coords=(m_tile,), shape=(128, 1), dtype=lm.f32)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 6
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn1)             # the tile's MMAs are issued: math0's turn
                    lm.commit(empty, stage=s)
                col_scale = Sb.load(coords=(0, n_tile), shape=(1, 128), dtype=lm.f32)
                lm.wait(c_turn0)
                sc[0].store((acc1 * row_scale * col_scale).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sc[0], coords=(m_tile, n_tile))
                if t + lm.num_blocks(0) < tiles:
                    lm.arrive(c_turn1)
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math0's tile
