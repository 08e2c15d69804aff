# Distilled from the H200 (2026-11-29): this persistent k-means variant (two 64 KiB X tiles,
# three 32.5 KiB centroid stages) verified, then failed at launch: cuFuncSetAttribute refused
# the dynamic shared memory. H009 counted the pools and mbarriers but not the slack the
# prologue spends aligning the dynamic base to 1024 B, nor the 1 KiB the system reserves per
# block. derive-smem now records the slack (cake.smem_align_slack) and H009 adds both.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
# CHECK: smem_launch_limit.cake:17:12: error: this kernel needs 233024 bytes of shared memory per block (231920 for pools and their alignment, 80 for mbarriers, 1024 reserved by the system), more than the 232448 bytes sm_90a allows [CAKE-H009]
# CHECK: help: shrink the pool (fewer stages or smaller tiles) by at least 576 bytes
@cake.schedule(target="sm_90a")
def kmeans_assign(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                  Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 128), 1)

    pool = lm.smem(230912)
    sx = pool.view(offset=0, shape=(256, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=3, swizzle=128b)
    scq = pool.view(offset=229376, shape=(1, 128), dtype=lm.f32, stage=3, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=3)
    xpipe = lm.pipeline(stages=2)
    x_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=xpipe)
    x_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(256, 128), dtype=lm.f32, role=math)
    best_d = lm.regs(shape=(256, 1), dtype=lm.f32, role=math)
    best_i = lm.regs(shape=(256, 1), dtype=lm.i32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_empty, stage=j % 2)
            sx.tma_load(X, coords=(b, t % tiles_m, 0), stage=j % 2, barrier=x_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 3
                lm.wait(empty, stage=s)
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=full, fill=lm.nan)

    with math:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x_full, stage=j % 2)
            x_sq = lm.sum_sq(sx[j % 2], axis=1)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 3
                lm.wait(full, stage=s)
                lm.mma(acc, sx[j % 2], sc[s], init=True)
                lm.argmin(best_d, best_i, scq[s].load() - 2.0 * acc, axis=1, base=kt * 128,
                          init=(kt == 0))
                lm.arrive(empty, stage=s)
            lm.arrive(x_empty, stage=j % 2)
            Idx.store(best_i, coords=(b, t % tiles_m))
            Dist.store(best_d + x_sq, coords=(b, t % tiles_m))
