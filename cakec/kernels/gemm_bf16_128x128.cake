# gemm_bf16.cake's persistent schedule with 128×128 tiles: twice the tiles of the 128×256
# form, for shapes whose 128×256 tiles leave SMs idle in the last wave (M·N of a few waves
# of 128×256, e.g. 1024×4096 is 32 tiles there, 64 here). Each consumer warpgroup issues
# 4 × wgmma m64n128k16 per 64-deep stage into 64 f32 registers; a 6-stage ring of 32 KiB
# stages. Tiles run M-fastest: at the shapes this route serves (M ≤ 2048, 16 M tiles) the
# CTAs running at once cover all of A and a few columns of B tiles, so both stay in L2
# without gemm_bf16's groups of 8. Same contract: any M, N, K ≥ 1 with K % 8 == 0; the
# `cakec tune` table picks it per shape bucket.
@cake.schedule(target="sm_90a")
def gemm_bf16_128x128(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(196608)                       # 6 stages × (16 KiB of A + 16 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m                 # the M tiles of one N tile side by side
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 6
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 6
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
