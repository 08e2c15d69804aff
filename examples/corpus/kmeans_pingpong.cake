# The k-means assignment of examples/kmeans_assign.cake with its two consumer warpgroups as two
# roles that take turns on the tensor cores (FlashAttention-3's "ping-pong"): wg0 issues its
# tile's MMA, lets wg1 issue its own (`turn1`), and before its next MMA waits until wg1 has
# (`turn0`). Each MMA then queues behind the other warpgroup's, so it runs under that
# warpgroup's epilogue instead of both epilogues leaving the tensor cores idle at once.
# Verified by every gate and assembled; not yet run on a GPU (the session's device time ran
# out), so it is a corpus kernel, not the example.
@cake.schedule(target="sm_90a")
def kmeans_pingpong(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                     Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 128), 1)  # ≥ 1: the running minimum is always written

    pool = lm.smem(198656)
    sx0 = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sx1 = pool.view(offset=65536, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    scq = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    wg0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    wg1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    x_full = lm.barrier(count=2, prod=[load], cons=[wg0, wg1], init_count=2, pipeline=pipe)
    x_empty = lm.barrier(count=2, prod=[wg0, wg1], cons=[load], init_count=2, pipeline=pipe)
    full = lm.barrier(count=2, prod=[load], cons=[wg0, wg1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[wg0, wg1], cons=[load], init_count=2, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[wg1], cons=[wg0])
    turn1 = lm.barrier(count=1, prod=[wg0], cons=[wg1])
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=wg0)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=wg1)
    bd0 = lm.regs(shape=(128, 1), dtype=lm.f32, role=wg0)
    bi0 = lm.regs(shape=(128, 1), dtype=lm.i32, role=wg0)
    bd1 = lm.regs(shape=(128, 1), dtype=lm.f32, role=wg1)
    bi1 = lm.regs(shape=(128, 1), dtype=lm.i32, role=wg1)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 2)
            sx0.tma_load(X, coords=(b, 2 * (t % tiles_m), 0), stage=j % 2, barrier=x_full)
            sx1.tma_load(X, coords=(b, 2 * (t % tiles_m) + 1, 0), stage=j % 2, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(empty, stage=s)
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan)

    with wg0:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 2)
            x_sq = lm.sum_sq(sx0[j % 2], axis=1)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(full, stage=s)
                lm.mma(acc0, sx0[j % 2], sc[s], init=True)
                lm.arrive(turn1)                  # wg1 may issue its MMA: it queues behind ours
                lm.argmin(bd0, bi0, scq[s].load() - 2.0 * acc0, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
                lm.wait(turn0)                    # wg1's MMA is issued: ours runs after it
            lm.arrive(x_empty, stage=j % 2)
            Idx.store(bi0, coords=(b, 2 * (t % tiles_m)))
            Dist.store(bd0 + x_sq, coords=(b, 2 * (t % tiles_m)))

    with wg1:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 2)
            x_sq = lm.sum_sq(sx1[j % 2], axis=1)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(turn1)
                lm.wait(full, stage=s)
                lm.mma(acc1, sx1[j % 2], sc[s], init=True)
                lm.arrive(turn0)
                lm.argmin(bd1, bi1, scq[s].load() - 2.0 * acc1, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 2)
            Idx.store(bi1, coords=(b, 2 * (t % tiles_m) + 1))
            Dist.store(bd1 + x_sq, coords=(b, 2 * (t % tiles_m) + 1))
