# The k-means assignment of examples/kmeans_assign.cake in 2-CTA clusters that multicast the
# centroid tiles (the lead of issue 16 for B=32, N=65536, K=1024, D=128).
#
# The shipped kernel streams every centroid tile from L2 once per 256-row item: at K = 1024,
# D = 128 that is 256 KiB of centroids per 64 KiB of X, four times the X traffic. Here the two
# CTAs of a cluster take two neighbouring row blocks of the same batch, in lockstep (both
# walk the same items: `lm.block_id(0) // 2` is the cluster's index), so they need the same
# centroid tiles at the same time: one of them copies each tile of C and of ||c||² once with
# `multicast=0`, and the box lands in both CTAs' SMEM, completing on both CTAs' `full`
# barriers. The L2 → SM traffic for centroids halves.
#
# The protocol the compiler derives and the safety gate checks (docs/language.md, "Clusters"):
# * each CTA's `full[s]` expects the whole stage (C and ||c||² bytes) from its own load role;
#   the copy comes from the cluster's rank-0 CTA;
# * a stage goes back to the producer only when the math roles of BOTH CTAs read it:
#   `lm.arrive(empty, stage=s, multicast=0)` arrives on `empty[s]` of every CTA of the
#   cluster (2 × 8 warps = 16 arrivals per phase, derived);
# * `lm.cluster_sync()` at the end: no CTA exits while its peer may still arrive on its
#   `empty` barriers (the compiler also syncs the cluster after mbarrier.init).
# X stays per CTA (its own tensor map box, its own ring). A ragged last pair (an odd number of
# row blocks) gives its rank-1 CTA a block past N: TMA reads zeros there and the stores skip
# rows past N, but the CTA still receives and releases the shared centroid tiles.
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def kmeans_assign_mc(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                     Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    pairs_m = lm.cdiv(tiles_m, 2)             # row-block pairs: one cluster item each
    work = pairs_m * B                        # (row-block pair, batch) items
    lm.grid(lm.min(work, lm.sm_count() // 2) * 2)
    tiles = lm.max(lm.cdiv(K, 128), 1)        # centroid tiles per item (≥ 1: K = 0 stores +inf)
    rank = lm.cluster_rank()                  # which block of the pair this CTA takes
    cluster = lm.block_id(0) // 2
    clusters = lm.num_blocks(0) // 2

    pool = lm.smem(198656)                    # 2 X tiles (64 KiB) + 2 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(256, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    scq = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    xpipe = lm.pipeline(stages=2)
    x_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=xpipe)
    x_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(256, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(256, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(256, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(cluster, work, clusters):
            j = t // clusters                 # this cluster's j-th item
            b = t // pairs_m
            lm.wait(x_empty, stage=j % 2)
            sx.tma_load(X, coords=(b, (t % pairs_m) * 2 + rank, 0), stage=j % 2,
                        barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2      # the ring runs on across items
                lm.wait(empty, stage=s)       # both CTAs' math roles released stage s
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full, multicast=0)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan, multicast=0)

    with math:
        for t in lm.range(cluster, work, clusters):
            j = t // clusters
            b = t // pairs_m
            m = (t % pairs_m) * 2 + rank
            lm.wait(x_full, stage=j % 2)
            x_sq = lm.sum_sq(sx[j % 2], axis=1)   # ||x||² per row, from the tile in SMEM
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 2], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s, multicast=0)   # to both CTAs of the cluster
            lm.arrive(x_empty, stage=j % 2)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, m))
            Dist.store(best_d + x_sq, coords=(b, m))
    lm.cluster_sync()
