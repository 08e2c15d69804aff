# Flash-KMeans assignment on Hopper: idx[b, i] = argmin_j ||x_i - c_j||², dist[b, i] = that
# squared distance, for X [B, N, D] and C [B, K, D] bf16 (D ≤ 128, D % 8 == 0).
#
# ||x - c||² = ||x||² + ||c||² - 2⟨x, c⟩: the cross term is a tensor-core GEMM with D as the
# MMA's K dimension, so the N×K distance matrix never leaves the registers.
# * Persistent: one CTA per SM loops over (256-row block of X, batch) items. X tiles are
#   double-buffered, so the next item's X and its first centroid tiles load under this item's
#   math. The batch's centroids stream through a 2-stage TMA ring of 128×D tiles, each with its
#   128 values of ||c||² (examples/kmeans_csq.cake computes them once per call). X, C and Csq
#   are TMA tensors, so a box never reaches into the next batch: centroid rows past K read
#   zeros and their ||c||² reads NaN (fill=lm.nan), which never wins a minimum.
# * 256 rows per item halve the centroid bytes each MMA needs from L2 compared with 128 (the
#   128-row kernels were bound by those reads: examples/corpus/kmeans_pairs.cake).
# * Two consumer warpgroups take 128 rows each: per centroid tile, 2 × 8 wgmma m64n128k16 into
#   a 128×128 f32 accumulator (128 registers per thread). One warpgroup's epilogue runs under
#   the other's wgmmas; there is no room for a second accumulator per warpgroup.
# * Epilogue per centroid tile: score = ||c||² − 2⟨x, c⟩, one FFMA per element (||x||² is the
#   same for every centroid of a row, so it is added once, to the final distance); each
#   thread keeps the running (min, index) of its four rows, tiles visited in increasing index
#   order, and the row's quad merges them (lowest index on ties) when the result is stored.
#   Reading the accumulator retires the MMA that read the stage, so the stage goes back to the
#   producer with a plain `lm.arrive` once its ||c||² has been read too.
@cake.schedule(target="sm_90a")
def kmeans_assign(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                  Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 128), 1)        # centroid tiles per item (≥ 1: K = 0 stores +inf)

    pool = lm.smem(198656)                    # 2 X tiles (64 KiB) + 2 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(256, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    scq = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    x_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    x_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(256, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(256, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(256, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)             # this CTA's j-th item
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 2)
            sx.tma_load(X, coords=(b, t % tiles_m, 0), stage=j % 2, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2          # the ring runs on across items
                lm.wait(empty, stage=s)
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan)

    with math:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 2)
            x_sq = lm.sum_sq(sx[j % 2], axis=1)   # ||x||² per row, from the tile in SMEM
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 2], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 2)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
