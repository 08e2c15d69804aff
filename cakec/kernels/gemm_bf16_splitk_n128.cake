# Decode split-K with 64×128 tiles: gemm_bf16_splitk_decode.cake's schedule with each tile
# twice as wide in N (C = A · Bᵀ, A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation,
# bf16 out; any M, N, K ≥ 1 with K % 8 == 0). At M ≤ 64 every tile reads its 64 rows of A
# once per K stage from L2, so with 64-wide tiles the SMs pull two bytes (A and B) per byte
# of the weights; 128-wide tiles halve the A reads (24 KiB stages: 8 KiB of A, 16 KiB of B).
# The wider tile halves the tile count too (N = 4096 is 32 tiles), so the K split fills the
# SMs: 64×4096×14336 runs 32 tiles × 4 parts = 128 units of 56 stages.
#
# The partial sums go through `C.split_store` (W [S, M, N] f32, L [cdiv(M, 64) · cdiv(N, 128)]
# i32 zero at launch and left zero; the last CTA of a tile adds the parts in order). Units run
# tile-major; the 8-stage ring continues across them.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_n128(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                          L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 64)
    tiles_n = lm.cdiv(N, 128)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(196608)                       # 8 stages × (8 KiB of A + 16 KiB of B)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=8, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=8, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=8)
    full = lm.barrier(count=8, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=8, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 8
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=full)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 8
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part, parts=parts, workspace=W,
                          counters=L, dtype=lm.bf16)
