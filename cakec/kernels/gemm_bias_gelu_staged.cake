# examples/gemm_bias_gelu.cake's ping-pong schedule with the epilogue a hand-writer would use:
# each consumer writes gelu(acc + bias) as bf16 into its own swizzled SMEM tile (stmatrix)
# and one thread copies it out with TMA stores, instead of 64 bounds-checked 4-byte global
# stores per thread (half a 32-byte sector each). The ring is 5 stages deep (2 × 32 KiB of
# staging take the sixth's place) and the bias comes from global memory per tile (its 1 KiB
# ring would not fit). C's rows must be 16-byte aligned (a TMA store; N % 8 == 0 contiguous).
# cakec.kernels.gemm_bias_gelu runs it up to 5 tiles per CTA, where the CTA's last epilogue,
# alone after its last MMA, decides (H200: 0.110 vs 0.113 ms at 2048x4096x4096, 0.055 vs 0.063
# at 1024x4096x4096); with many tiles per CTA the 6-stage ring wins (docs/codegen.md).
@cake.schedule(target="sm_90a")
def gemm_bias_gelu_staged(lm, A: LM.tma2d, B: LM.tma2d, Bias: LM.tensor2d, C: LM.tma2d,
                          M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(229376)                       # 5 × 32 KiB ring + 2 × 32 KiB C staging
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb = pool.view(offset=81920, shape=(128, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sc = pool.view(offset=163840, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=5)
    full = lm.barrier(count=5, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=5, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
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
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 5
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math0:                                  # this CTA's tiles 0, 2, 4, ...
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            if j % 2 == 0:
                group = t // (8 * tiles_n)
                rows = lm.min(tiles_m - group * 8, 8)
                m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
                n_tile = (t - group * 8 * tiles_n) // rows
                if j > 0:
                    lm.wait(turn1)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 5
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn0)
                    lm.commit(empty, stage=s)
                bias = Bias.load(coords=(0, n_tile), shape=(1, 128), dtype=lm.f32)
                sc[0].store(lm.gelu(acc0 + bias).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sc[0], coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 5, count=k_tiles)

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
                    s = (j * k_tiles + k) % 5
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn1)
                    lm.commit(empty, stage=s)
                bias = Bias.load(coords=(0, n_tile), shape=(1, 128), dtype=lm.f32)
                sc[1].store(lm.gelu(acc1 + bias).to(lm.bf16))
                lm.fence_proxy()
                C.tma_store(sc[1], coords=(m_tile, n_tile))
            else:
                lm.skip(full, stage=(j * k_tiles) % 5, count=k_tiles)
