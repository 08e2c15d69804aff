# Near miss: the i8 TMEM MMA on sm_100a.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(49152)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.i8, stage=3)
    sb = pool.view(offset=24576, shape=(128, 64), dtype=lm.i8, stage=3)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.i32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[mma], cons=[load], init_count=1, pipeline=pipe)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
