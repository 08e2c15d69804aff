# Decode split-K, swap-AB: C = A · Bᵀ for M ≤ 16 computed as Cᵀ = B · Aᵀ (A [M, K], B [N, K],
# C [M, N], bf16 in, f32 accumulation, bf16 out; any M, N, K ≥ 1 with K % 8 == 0; correct
# for any M, fast below 17).
#
# wgmma's M is 64 rows per warpgroup, its N any multiple of 8. gemm_bf16_splitk_decode.cake
# puts the activations' rows on the MMA's M: at M = 1 its 64-row A box is 63 rows of TMA
# zero fill per stage, as many bytes as the B box. Here the weights are the MMA's A operand
# (64 rows of N per instruction) and the activations its B (a 16-row box: 2 KiB against
# 8 KiB of B per stage), so a stage is 10 KiB and 18 of them (144 KiB of B) are in flight per
# SM. The accumulator (64, 16) is a tile of Cᵀ: `split_store(..., transpose=True)` stores it
# as C's (16, 64) tile at (m_tile, n_tile).
#
# Split-K as in gemm_bf16_splitk_decode.cake: parts = min(S, K tiles), `per` stages each,
# W [S, M, N] f32 and L [cdiv(M, 16) · cdiv(N, 64)] i32 from the caller, the last CTA of a
# tile adds the parts in order. Units run tile-major, M tiles of one N tile side by side.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_swap(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                          L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 16)
    tiles_n = lm.cdiv(N, 64)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(184320)                       # 18 stages × (8 KiB of B + 2 KiB of A)
    sb = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=18, swizzle=128b)
    sa = pool.view(offset=147456, shape=(16, 64), dtype=lm.bf16, stage=18, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=18)
    full = lm.barrier(count=18, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=18, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 16), dtype=lm.f32, role=math)   # a tile of Cᵀ

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 18
                lm.wait(empty, stage=s)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=full)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=full)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 18
                lm.wait(full, stage=s)
                lm.mma(acc, sb[s], sa[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part, parts=parts, workspace=W,
                          counters=L, dtype=lm.bf16, transpose=True)
