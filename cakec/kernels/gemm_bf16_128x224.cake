# gemm_bf16.cake's persistent schedule with 128×224 tiles and a 5-stage ring. C = A · Bᵀ:
# A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation, bf16 out; any M, N, K ≥ 1 with
# K % 8 == 0 (tails by TMA zero fill and bounds-checked stores).
#
# Why 224 columns: N = 14336 is 64 tiles of 224 (56 of 256), so 512×14336 is 256 tiles, 1.94
# waves of 132 SMs, against 224 tiles of 256 columns, 1.70 waves that take two full tile
# times: the same two rounds with 7/8 of the work each. A stage is 16 KiB of A + 28 KiB of B,
# so five fit in SMEM (220 KiB) where the 128×256 tile has four. Each consumer warpgroup
# issues 4 × wgmma m64n224k16 per stage into 112 f32 registers.
@cake.schedule(target="sm_90a")
def gemm_bf16_128x224(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32,
                      K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 224)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(225280)                       # 5 stages × (16 KiB of A + 28 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb = pool.view(offset=81920, shape=(224, 64), dtype=lm.bf16, stage=5, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=5)
    full = lm.barrier(count=5, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=5, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 224), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)           # groups of 8 M tiles sweep N together
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 5
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
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 5
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
