# The few-centroids route for D <= 64 with four math warpgroups: kmeans_assign_k32_d64.cake's
# tiles and rings, each 256-row item split over 4 warpgroups of 64 rows instead of 2 of 128.
# At K <= 32 an item's math is a short dependent chain per warpgroup (||x||², 4 wgmma
# m64n32k16 per 64 rows, the argmin, the quad merge, the row stores) and the H200 measured
# the two-warpgroup forms at 1.8-2.3 µs per item whether the item's X is 32 or 64 KiB (B = 32,
# N = 65536, K = 16: rows256_k32 0.1327 ms at D = 64, 0.1385 at D = 128; this form's
# 0.1097-0.1199 at D = 64): bound by the chain's latency with two warps per scheduler, not
# by streaming X. Not yet run on a GPU. Four
# warpgroups put four warps on each scheduler and halve each chain. No `regs=`: at 640
# threads the launch gives 96 registers per thread (what the math needs: 16 for the
# accumulator), and setmaxnreg.inc draws only on what the CTA's other warpgroups released
# (128 x 40 + 512 x 112 exceeds the CTA's 640 x 96: kmeans_assign_k32_w4's first draft hung
# on the H200). Correct for any K and D <= 64 (`requires`).
@cake.schedule(target="sm_90a")
def kmeans_assign_k32_d64_w4(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                             Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 32), 1)         # centroid tiles per item (≥ 1: K = 0 stores +inf)

    pool = lm.smem(213504)                    # 6 X tiles (192 KiB) + 4 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(256, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sc = pool.view(offset=196608, shape=(32, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=212992, shape=(1, 32), dtype=lm.f32, stage=4, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
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
