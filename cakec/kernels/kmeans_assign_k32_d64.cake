# The few-centroids route for D ≤ 64: kmeans_assign_k32.cake with 64-wide tiles of X and C
# (one 128-byte swizzle atom per row, as kmeans_assign_d64.cake). At K ≤ 32 the item's work is
# streaming its X rows: the 128-wide kernel gives a D = 64 item a 64 KiB box of which half is
# zero fill, sums the squares of and multiplies over those zero columns, and so has room for
# only 3 items in flight (0.73x the Triton kernel at B = 32, N = 65536, K = 16, D = 64, where
# X is 268 MB). Here an item's X tile is 256 × 64 (32 KiB), its ||x||² and MMA span 64 columns,
# and 6 X tiles are in flight per SM. Correct for any K (the route table times it at K ≤ 32)
# and D ≤ 64 (its `requires`).
@cake.schedule(target="sm_90a")
def kmeans_assign_k32_d64(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                          Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 32), 1)         # centroid tiles per item (≥ 1: K = 0 stores +inf)

    pool = lm.smem(213504)                    # 6 X tiles (192 KiB) + 4 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(256, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sc = pool.view(offset=196608, shape=(32, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=212992, shape=(1, 32), dtype=lm.f32, stage=4, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    xpipe = lm.pipeline(stages=6)
    x_full = lm.barrier(count=6, prod=[load], cons=[math], pipeline=xpipe)
    x_empty = lm.barrier(count=6, prod=[math], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(256, 32), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(256, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(256, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)             # this CTA's j-th item
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 6)
            sx.tma_load(X, coords=(b, t % tiles_m, 0), stage=j % 6, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 4          # the ring runs on across items
                lm.wait(empty, stage=s)
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan)

    with math:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 6)
            x_sq = lm.sum_sq(sx[j % 6], axis=1)   # ||x||² per row, from the tile in SMEM
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 6], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 32,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 6)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
