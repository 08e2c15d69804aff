# A broken candidate for bench/reject_speed.py and the sanitizer (bug class `early_release`,
# made from examples/kmeans_assign.cake): the math role hands the centroid stage back
# (`lm.arrive(empty)`) before it reads that stage's ||c||^2 (`scq[s].load()`), so the
# producer's next TMA load can overwrite the bytes under the read: a shared-memory race.
# `cakec verify` rejects it (CAKE-S003); `cakec run --unchecked --sanitize racecheck` shows it.
@cake.schedule(target="sm_90a")
def kmeans_early_release(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                  Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.cdiv(K, 128)                   # centroid tiles per item

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
                lm.arrive(empty, stage=s)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 128,
                          init=(kt == 0))
            lm.arrive(x_empty, stage=j % 2)       # its MMAs are retired: the last read waited
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
