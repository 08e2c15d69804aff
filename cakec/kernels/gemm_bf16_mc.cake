# gemm_bf16.cake's persistent 128×256 schedule in 2-CTA clusters that share each B stage by
# TMA multicast. C = A · Bᵀ: A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation, bf16
# out; any M, N, K ≥ 1 with K % 8 == 0 (tails by TMA zero fill and bounds-checked stores).
#
# Why: the 128×256 tile streams 48 KiB of A and B per 64-deep K stage (4.2 MFLOP), ~6 TB/s
# of L2 → SM traffic over 132 SMs at cuBLAS's speed. Here the two CTAs of a cluster take the
# two 128-row halves of one 256×256 item (neighbouring M tiles, the same N tile) in lockstep,
# so they need the same B stage at the same time: the cluster's rank-0 CTA copies it once
# with `multicast=0` into both CTAs' SMEM (completing on both CTAs' `full`), and each CTA
# copies its own A. L2 → SM bytes per stage: 32 KiB per CTA on average instead of 48.
# * Items are 256×256 (a pair of M tiles × one N tile), in groups of 8 pairs (16 M tiles)
#   that sweep N together, so the clusters running at once share A and B rows in L2.
# * A stage goes back to the producers only when both CTAs' MMAs have read it: the ring
#   loop's `lm.commit(empty, stage=s, multicast=0)` arrives on `empty[s]` of both CTAs
#   (2 warpgroups × 2 CTAs = 4 arrivals per phase, derived), and the producer's wait on
#   `empty` guards the multicast copy (CAKE-S045).
# * A ragged last pair (an odd number of M tiles) gives its rank-1 CTA the tile past M: TMA
#   reads zeros there and the bounds-checked store writes nothing, but the CTA still takes
#   and releases the shared B stages.
# * `lm.cluster_sync()` at the end: no CTA exits while its peer may still arrive on its
#   barriers or copy into its SMEM.
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def gemm_bf16_mc(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    pairs_m = lm.cdiv(lm.cdiv(M, 128), 2)       # 256-row items: one M tile per CTA of a pair
    tiles_n = lm.cdiv(N, 256)
    items = pairs_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(items, lm.sm_count() // 2) * 2)
    rank = lm.cluster_rank()                     # which M tile of the pair this CTA takes
    cluster = lm.block_id(0) // 2
    clusters = lm.num_blocks(0) // 2

    pool = lm.smem(196608)                       # 4 stages × (16 KiB of A + 32 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(256, 64), dtype=lm.bf16, stage=4, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(cluster, items, clusters):
            group = t // (8 * tiles_n)
            rows = lm.min(pairs_m - group * 8, 8)
            m_pair = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                # The ring continues across items: this cluster's k-th stage of its j-th item.
                s = ((t // clusters) * k_tiles + k) % 4
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
                s = ((t // clusters) * k_tiles + k) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s, multicast=0)   # released in both CTAs
            C.tma_store(acc.to(lm.bf16), coords=(m_pair * 2 + rank, n_tile))
    lm.cluster_sync()
