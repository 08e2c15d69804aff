# C = gelu_tanh(A · Bᵀ + bias) on Hopper with ping-pong consumer warpgroups: A [M, K], B [N, K]
# bf16, Bias [1, N] f32, C [M, N] bf16; f32 accumulation and epilogue. Any M, N, K ≥ 1 with
# K % 8 == 0; tails are handled by TMA's zero fill on loads and by bounds-checked stores.
#
# The schedule is examples/gemm_bf16_pingpong.cake's (each consumer warpgroup owns whole
# 128×128 tiles, the mainloops take turns on one ring); the epilogue is the cooperative
# schedule's (examples/gemm_bias_gelu_cooperative.cake), and it is what ping-pong is for:
# gelu(acc + bias) costs a few FP32 ops and a tanh.approx per element, and here one warpgroup
# evaluates and stores its tile while the other's MMAs keep the tensor cores busy. Each
# tile's 128 bias values come into SMEM by TMA (stage j % 2 of a 2-deep ring: math0's tiles
# use stage 0, math1's stage 1; each consumer passes over the other's with `lm.skip`).
@cake.schedule(target="sm_90a")
def gemm_bias_gelu(lm, A: LM.tma2d, B: LM.tma2d, Bias: LM.tma2d, C: LM.tma2d,
                            M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(197632)                       # 6 × (16 KiB of A + 16 KiB of B) + 1 KiB
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sbias = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    bias_pipe = lm.pipeline(stages=2)            # tile j's bias in stage j % 2: math0's 0, math1's 1
    bias_full = lm.barrier(count=2, prod=[load], cons=[math0, math1], pipeline=bias_pipe)
    bias_empty = lm.barrier(count=2, prod=[math0, math1], cons=[load], pipeline=bias_pipe)
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
            j = t // lm.num_blocks(0)                # this CTA's j-th tile
            lm.wait(bias_empty, stage=j % 2)
            sbias.tma_load(Bias, coords=(0, n_tile), stage=j % 2, barrier=bias_full)
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
                lm.wait(bias_full, stage=j % 2)
                bias = sbias[j % 2].load()
                lm.arrive(bias_empty, stage=j % 2)
                C.tma_store(lm.gelu(acc0 + bias).to(lm.bf16), coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math1's tile
                lm.skip(bias_full, stage=j % 2)

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
                lm.wait(bias_full, stage=j % 2)
                bias = sbias[j % 2].load()
                lm.arrive(bias_empty, stage=j % 2)
                C.tma_store(lm.gelu(acc1 + bias).to(lm.bf16), coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 6, count=k_tiles)       # math0's tile
                lm.skip(bias_full, stage=j % 2)
