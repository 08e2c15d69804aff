# examples/gemm_residual.cake with the epilogue written back through R's own stage: each
# consumer reads R with ldmatrix, writes acc + α·r as bf16 over it (stmatrix; each warp rewrites
# exactly the rows it read), and one thread copies the stage to C with TMA stores (clipped at
# C's edges), instead of 64 bounds-checked 4-byte global stores per thread. The stage goes back
# to the producer once the copy has read it (the compiler waits for the bulk group there). C's
# rows must be 16-byte aligned, as R's (N % 8 == 0). Timed beside gemm_residual.cake by
# bench/gemm_epilogues.py: the store path is the only difference (same 6-stage ring).
@cake.schedule(target="sm_90a")
def gemm_residual_staged(lm, A: LM.tma2d, B: LM.tma2d, R: LM.tma2d, C: LM.tma2d, alpha: LM.f32,
                  M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(229376)                       # 6 × (16 KiB of A + 16 KiB of B) + 32 KiB of R
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sr = pool.view(offset=196608, shape=(128, 128), dtype=lm.bf16, stage=1, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    r_pipe = lm.pipeline(stages=1)               # every tile's R in the one stage, in tile order
    r_full = lm.barrier(count=1, prod=[load], cons=[math0, math1], pipeline=r_pipe)
    r_empty = lm.barrier(count=1, prod=[math0, math1], cons=[load], pipeline=r_pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    # R's one stage goes to the consumers in turn: each waits for R(j) only after the other
    # has seen R(j-1) land (a parity wait could otherwise pass on phase j-2).
    r_turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])
    r_turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])
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
            # After the tile's stages: the wait is for the previous tile's epilogue, which
            # ran while this tile's first stages were consumed.
            lm.wait(r_empty, stage=0)
            sr.tma_load(R, coords=(m_tile, n_tile), stage=0, barrier=r_full)

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
                if j > 0:
                    lm.wait(r_turn1)                 # math1 has waited for tile j-1's R
                lm.wait(r_full, stage=0)
                if t + lm.num_blocks(0) < tiles:
                    lm.arrive(r_turn0)
                r = sr[0].load()
                sr[0].store((acc0 + alpha * r.to(lm.f32)).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sr[0], coords=(m_tile, n_tile))
                lm.arrive(r_empty, stage=0)          # after the copy has read the stage
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math1's tile
                lm.skip(r_full, stage=0)

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
                lm.wait(r_turn0)
                lm.wait(r_full, stage=0)
                if t + lm.num_blocks(0) < tiles:
                    lm.arrive(r_turn1)
                r = sr[0].load()
                sr[0].store((acc1 + alpha * r.to(lm.f32)).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sr[0], coords=(m_tile, n_tile))
                lm.arrive(r_empty, stage=0)
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math0's tile
                lm.skip(r_full, stage=0)
