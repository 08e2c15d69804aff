# The near miss of first_wrong_event.test: a persistent tcgen05 GEMM whose ring stages,
# releases and accumulator hand-back all agree (it verifies clean). Each mutant there changes
# one event; the error lands at that event, the failure it causes is its note.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, T: LM.i32, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=3, prod=[mma], cons=[load])
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    acc_empty = lm.barrier(count=1, prod=[epi], cons=[mma])
    with load:
        for t in lm.range(0, T):
            for k in lm.range(0, k_tiles):
                s = (t * k_tiles + k) % 3
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(t, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(t, k), stage=s, barrier=full)
    with mma:
        for t in lm.range(0, T):
            lm.wait(acc_empty)
            for k in lm.range(0, k_tiles):
                s = (t * k_tiles + k) % 3
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            lm.commit(acc_full)
    with epi:
        for t in lm.range(0, T):
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(t, 0))
            lm.arrive(acc_empty)
