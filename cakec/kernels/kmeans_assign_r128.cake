# The small-problem route of the k-means assignment: examples/kmeans_assign.cake with
# 128-row items instead of 256, for problems whose B · cdiv(N, 256) items leave SMs idle
# (B = 1, N = 16384 is 64 items there, 128 here). Each consumer warpgroup takes 64 rows:
# per centroid tile 8 × wgmma m64n128k16 into 64 f32 registers per thread, so the centroid
# ring has room for 4 stages. Twice the centroid bytes per MMA from L2 as the 256-row form,
# which is what the large problems are bound by: the route table
# (cakec/kernels/kmeans_assign_routes.json) sends only small problems here.
@cake.schedule(target="sm_90a")
def kmeans_assign_r128(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                       Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 128)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.cdiv(K, 128)                   # centroid tiles per item

    pool = lm.smem(198656)                    # 2 X tiles (64 KiB) + 4 stages of C + ||c||²
    sx = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=65536, shape=(128, 128), dtype=lm.bf16, stage=4, swizzle=128b)
    scq = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=4, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    xpipe = lm.pipeline(stages=2)
    x_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=xpipe)
    x_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)             # this CTA's j-th item
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 2)
            sx.tma_load(X, coords=(b, t % tiles_m, 0), stage=j % 2, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 4          # the ring runs on across items
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
                s = (j * tiles + kt) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 2], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 2)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
