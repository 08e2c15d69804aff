# The MMA role peels the first K step (it initialises the accumulator) and loops over the
# rest; the load role runs one loop over all K steps. Both loops count k_tiles, so the two
# roles agree on every trip count, including k_tiles = 1 where the MMA loop runs 0 times.
@cake.schedule(target="sm_100a")
def peeled_prologue(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 2)
            sa.tma_load(A, coords=(0, k), stage=k % 2, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 2, barrier=full)

    with mma:
        lm.wait(full, stage=0)
        lm.mma(acc, sa[0], sb[0], init=True)
        lm.commit(empty, stage=0)
        for k in lm.range(1, k_tiles):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2])
            lm.commit(empty, stage=k % 2)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
