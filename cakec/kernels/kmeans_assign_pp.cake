# The k-means assignment of kmeans_assign.cake with the two consumer warpgroups taking turns
# on the tensor cores (ping-pong), for the large problems (B=32, N=65536, K=1024, D=128).
#
# In kmeans_assign.cake both warpgroups of one 8-warp role wait for the same centroid stage,
# issue their MMAs together and then run their argmin epilogues together: per 128-centroid
# tile a warpgroup's 16 wgmmas take ~1024 tensor cycles (both ~2048, interleaved) and its
# epilogue (an FFMA, a compare and two selects per score: ~512 instructions a warp, two warps
# per scheduler) ~1024 cycles in which the tensor cores idle — ~3000 cycles per tile where
# the MMAs alone need ~2048 (measured: 0.96–1.00 ms against the GEMM floor's 0.70).
# Here each warpgroup is a role of its own with its own 128 rows of the item (two 128-row X
# tiles, `sx0` and `sx1`), and both read every centroid stage. The mainloops take turns:
# math0 issues its MMAs for a tile and hands the turn to math1 (`turn0`), whose MMAs queue
# behind them; math1 hands it back (`turn1`) before math0 issues the next tile's. So math0's
# epilogue runs under math1's MMAs and math1's under math0's next ones.
# Each role reads the tile's ||c||² into registers and releases the stage as soon as its
# MMAs completed (`lm.commit`), before its epilogue: the stage goes back to the producer when
# math1's MMAs retire, two MMA phases before math0 needs it again (the ring stays 2 deep:
# 2 × 64 KiB of X and 2 × 32 KiB of C fill the SMEM).
# Every row sees the same MMAs, ||c||² values and merge order as in kmeans_assign.cake, and
# x_sq sums each row in the same order, so the results are equal bit for bit.
@cake.schedule(target="sm_90a")
def kmeans_assign_pp(lm, X: LM.tma3d, C: LM.tma3d, Csq: LM.tma2d, Idx: LM.tensor2d,
                     Dist: LM.tensor2d, B: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(N, 256)
    work = tiles_m * B                        # (256-row block, batch) items
    lm.grid(lm.min(work, lm.sm_count()))
    tiles = lm.max(lm.cdiv(K, 128), 1)        # centroid tiles per item (≥ 1: K = 0 stores +inf)

    pool = lm.smem(198656)                    # 2 × 2 X tiles of 128 rows + 2 stages of C + ||c||²
    sx0 = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sx1 = pool.view(offset=65536, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sc = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    scq = pool.view(offset=196608, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)     # rows 0..127 of each item
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)   # rows 128..255
    xpipe = lm.pipeline(stages=2)
    pipe = lm.pipeline(stages=2)
    x0_full = lm.barrier(count=2, prod=[load], cons=[math0], pipeline=xpipe)
    x0_empty = lm.barrier(count=2, prod=[math0], cons=[load], pipeline=xpipe)
    x1_full = lm.barrier(count=2, prod=[load], cons=[math1], pipeline=xpipe)
    x1_empty = lm.barrier(count=2, prod=[math1], cons=[load], pipeline=xpipe)
    full = lm.barrier(count=2, prod=[load], cons=[math0, math1], pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math0, math1], cons=[load], init_count=2, pipeline=pipe)
    qpipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=2, prod=[load], cons=[math0, math1], pipeline=qpipe)
    q_empty = lm.barrier(count=2, prod=[math0, math1], cons=[load], init_count=2, pipeline=qpipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math0)
    best_d0 = lm.regs(shape=(128, 1), dtype=lm.f32, role=math0)
    best_i0 = lm.regs(shape=(128, 1), dtype=lm.i32, role=math0)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math1)
    best_d1 = lm.regs(shape=(128, 1), dtype=lm.f32, role=math1)
    best_i1 = lm.regs(shape=(128, 1), dtype=lm.i32, role=math1)

    with load:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)             # this CTA's j-th item
            b = t // tiles_m
            m = (t % tiles_m) * 2                 # the item's first 128-row block
            lm.wait(x0_empty, stage=j % 2)
            sx0.tma_load(X, coords=(b, m, 0), stage=j % 2, barrier=x0_full)
            lm.wait(x1_empty, stage=j % 2)
            sx1.tma_load(X, coords=(b, m + 1, 0), stage=j % 2, barrier=x1_full)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2          # the ring runs on across items
                lm.wait(empty, stage=s)           # both roles' MMAs read stage s
                sc.tma_load(C, coords=(b, kt, 0), stage=s, barrier=full)
                lm.wait(q_empty, stage=s)         # both roles have its ||c||² in registers
                scq.tma_load(Csq, coords=(b, kt), stage=s, barrier=q_full, fill=lm.nan)

    with math0:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x0_full, stage=j % 2)
            x_sq = lm.sum_sq(sx0[j % 2], axis=1)  # ||x||² per row, from the tile in SMEM
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                if j > 0 or kt > 0:
                    lm.wait(turn1)                # math1 issued the previous tile's MMAs
                lm.wait(full, stage=s)
                lm.mma(acc0, sx0[j % 2], sc[s], init=True)
                lm.arrive(turn0)                  # math1's MMAs go behind these
                lm.commit(empty, stage=s)         # once its MMAs read it: before the epilogue
                lm.wait(q_full, stage=s)
                cq = scq[s].load()
                lm.arrive(q_empty, stage=s)       # each warp after its own reads
                lm.argmin(best_d0, best_i0, cq - 2.0 * acc0, axis=1, base=kt * 128,
                          init=(kt == 0))
            lm.commit(x0_empty, stage=j % 2)      # its MMAs read the X tile: release it
            Idx.store(best_i0, coords=(b, (t % tiles_m) * 2))
            Dist.store(best_d0 + x_sq, coords=(b, (t % tiles_m) * 2))

    with math1:
        for t in lm.range(lm.block_id(0), work, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            b = t // tiles_m
            lm.wait(x1_full, stage=j % 2)
            x_sq = lm.sum_sq(sx1[j % 2], axis=1)
            for kt in lm.range(0, tiles):
                s = (j * tiles + kt) % 2
                lm.wait(turn0)                    # math0 issued this tile's MMAs
                lm.wait(full, stage=s)
                lm.mma(acc1, sx1[j % 2], sc[s], init=True)
                if kt < tiles - 1 or t + lm.num_blocks(0) < work:
                    lm.arrive(turn1)              # math0's next MMAs go behind these
                lm.commit(empty, stage=s)
                lm.wait(q_full, stage=s)
                cq = scq[s].load()
                lm.arrive(q_empty, stage=s)
                lm.argmin(best_d1, best_i1, cq - 2.0 * acc1, axis=1, base=kt * 128,
                          init=(kt == 0))
            lm.commit(x1_empty, stage=j % 2)
            Idx.store(best_i1, coords=(b, (t % tiles_m) * 2 + 1))
            Dist.store(best_d1 + x_sq, coords=(b, (t % tiles_m) * 2 + 1))
