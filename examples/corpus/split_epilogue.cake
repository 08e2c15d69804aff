# Two epilogue warpgroups drain one 128x256 accumulator, each its own 128-column TMEM half.
# acc_full is consumed by both; acc_empty needs one release from each (init_count=2) before
# the MMA role may overwrite the accumulator for the next tile.
@cake.schedule(target="sm_100a")
def split_epilogue(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32, T: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(147456)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb0 = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb1 = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc_lo = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    acc_hi = lm.tmem(cols=128, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi_lo = lm.role(warps=[4, 5, 6, 7])
    epi_hi = lm.role(warps=[8, 9, 10, 11])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=3, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi_lo, epi_hi])
    acc_empty = lm.barrier(count=1, prod=[epi_lo, epi_hi], cons=[mma], init_count=2)

    with load:
        for t in lm.range(0, T):
            for k in lm.range(0, k_tiles):
                s = (t * k_tiles + k) % 3
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(t, k), stage=s, barrier=full)
                sb0.tma_load(B, coords=(0, k), stage=s, barrier=full)
                sb1.tma_load(B, coords=(1, k), stage=s, barrier=full)

    with mma:
        for t in lm.range(0, T):
            lm.wait(acc_empty)
            for k in lm.range(0, k_tiles):
                s = (t * k_tiles + k) % 3
                lm.wait(full, stage=s)
                lm.mma(acc_lo, sa[s], sb0[s], init=(k == 0))
                lm.mma(acc_hi, sa[s], sb1[s], init=(k == 0))
                lm.commit(empty, stage=s)
            lm.commit(acc_full)

    with epi_lo:
        for t in lm.range(0, T):
            lm.wait(acc_full)
            C.tma_store(acc_lo.to(lm.bf16), coords=(t, 0))
            lm.arrive(acc_empty)

    with epi_hi:
        for t in lm.range(0, T):
            lm.wait(acc_full)
            C.tma_store(acc_hi.to(lm.bf16), coords=(t, 1))
            lm.arrive(acc_empty)
