# The few-centroids route for D <= 64, two CTAs per SM: kmeans_assign_k32_d64.cake's tiles
# with half its rings (3 X tiles of 32 KiB, 3 centroid stages: 108 KiB a CTA) and no `regs=`
# (the kernel needs ~48 registers a thread, so two 384-thread CTAs fit an SM), launched on
# twice the SMs' count. Each SM then runs two independent item streams, each with its own
# producer and two math warpgroups, where the one-CTA forms measured 1.8-2.3 µs per 256-row
# item whatever the item's bytes (docs/kernels.md, port25): the chain of one item overlaps
# the other CTA's. The same X bytes in flight per SM (6 tiles) as the one-CTA form. Not yet
# run on a GPU. Correct for any K and D <= 64 (`requires`).
@cake.schedule(target="sm_90a")
def kmeans_assign_k32_d64_x2(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                             Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, 2 * lm.sm_count()))  # two CTAs per SM
    tiles = lm.max(lm.cdiv(K, 32), 1)         # centroid tiles per item (≥ 1: K = 0 stores +inf)

    pool = lm.smem(110976)                    # 3 X tiles (96 KiB) + 3 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(256, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sc = pool.view(offset=98304, shape=(32, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    scq = pool.view(offset=110592, shape=(1, 32), dtype=lm.f32, stage=3, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    pipe = lm.pipeline(stages=3)
    xpipe = lm.pipeline(stages=3)
    x_full = lm.barrier(count=3, prod=[load], cons=[math], pipeline=xpipe)
    x_empty = lm.barrier(count=3, prod=[math], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(256, 32), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(256, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(256, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)             # this CTA's j-th item
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 3)
            sx.tma_load(X, coords=(b, t % tiles_m, 0), stage=j % 3, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 3          # the ring runs on across items
                lm.wait(empty, stage=s)
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan)

    with math:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 3)
            x_sq = lm.sum_sq(sx[j % 3], axis=1)   # ||x||² per row, from the tile in SMEM
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 3
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 3], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 32,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 3)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
