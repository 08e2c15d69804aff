# The cooperative schedule of examples/gemm_bias_gelu.cake (its previous form): C = gelu(A·Bᵀ+b);
# f32 accumulation and epilogue. A linear layer with its activation fused: the unfused pair
# (a GEMM writing A·Bᵀ + bias, then a gelu kernel reading it back) moves C through memory
# three times, this kernel once. Any M, N, K ≥ 1 with K % 8 == 0; tails are handled by TMA's
# zero fill on loads and by bounds-checked loads and stores.
#
# The schedule is examples/gemm_bf16.cake's (persistent 128×256 tiles in groups of 8 M-tiles,
# a TMA producer warpgroup, two consumer warpgroups, a 4-stage 128-byte-swizzled ring); only
# the epilogue differs:
# * the producer brings each tile's 256 bias values (1 KiB) into SMEM by TMA with the tile's
#   first stages (a 2-deep ring of its own, `bias_full`/`bias_empty`, so the ring of A and B
#   is unchanged); the consumers read them from SMEM after the K loop (no global-memory
#   latency in the epilogue) and hand the buffer back before the store;
# * gelu(acc + bias) is evaluated per accumulator register by the store itself (no
#   temporaries: one add, a few FMAs and one tanh.approx per element) into packed bf16
#   pairs: a whole tile is written in parts under the next tile's wgmma groups, a tail
#   bounds-checked at once. The math role has 240 registers (the producer 24): accumulator
#   128 + packed tile 64 + bias 64 need them (at 232 ptxas spills, so the emitter would
#   store at once instead).
@cake.schedule(target="sm_90a")
def gemm_bias_gelu_cooperative(lm, A: LM.tma2d, B: LM.tma2d, Bias: LM.tma2d, C: LM.tma2d,
                               M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 256)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(198656)                       # 4 stages × (16 KiB of A + 32 KiB of B) + 2 KiB
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(256, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sbias = pool.view(offset=196608, shape=(1, 256), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=24)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=240)
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    bias_pipe = lm.pipeline(stages=2)
    bias_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=bias_pipe)
    bias_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=bias_pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

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
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            j = t // lm.num_blocks(0)
            lm.wait(bias_full, stage=j % 2)
            bias = sbias[j % 2].load()
            lm.arrive(bias_empty, stage=j % 2)
            C.tma_store(lm.gelu(acc + bias).to(lm.bf16), coords=(m_tile, n_tile))
