# gemm_bf16_mc.cake's 2-CTA clusters (each B stage copied once by TMA multicast into both
# CTAs, which take the two 128-row halves of a 256-row item in lockstep) with
# gemm_bf16_128x224.cake's 128×224 tiles and 5-stage ring (16 KiB of A + 28 KiB of B per
# stage, 220 KiB): N = 14336 is 64 tiles of 224, so 512×14336 is 128 items, 1.94 rounds of
# 66 clusters, against 112 items of 256 columns, 1.70 rounds. Same contract: any M, N, K ≥ 1
# with K % 8 == 0; the stage is released to both CTAs by `lm.commit(..., multicast=0)`, a
# ragged last pair's rank-1 CTA computes zeros past M and stores nothing, and the kernel ends
# with `lm.cluster_sync()`.
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def gemm_bf16_mc_128x224(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    pairs_m = lm.cdiv(lm.cdiv(M, 128), 2)       # 256-row items: one M tile per CTA of a pair
    tiles_n = lm.cdiv(N, 224)
    items = pairs_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(items, lm.sm_count() // 2) * 2)
    rank = lm.cluster_rank()                     # which M tile of the pair this CTA takes
    cluster = lm.block_id(0) // 2
    clusters = lm.num_blocks(0) // 2

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
        for t in lm.range(cluster, items, clusters):
            group = t // (8 * tiles_n)
            rows = lm.min(pairs_m - group * 8, 8)
            m_pair = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                # The ring continues across items: this cluster's k-th stage of its j-th item.
                s = ((t // clusters) * k_tiles + k) % 5
                lm.wait(empty, stage=s)          # both CTAs' MMAs have read stage s
                sa.tma_load(A, coords=(m_pair * 2 + rank, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full, multicast=0)

    with math:
        for t in lm.range(cluster, items, clusters):
            group = t // (8 * tiles_n)
            rows = lm.min(pairs_m - group * 8, 8)
            m_pair = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                s = ((t // clusters) * k_tiles + k) % 5
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s, multicast=0)   # released in both CTAs
            C.tma_store(acc.to(lm.bf16), coords=(m_pair * 2 + rank, n_tile))
    lm.cluster_sync()
