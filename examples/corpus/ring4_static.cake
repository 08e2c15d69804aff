# A 4-stage TMA -> tcgen05 ring over 10 K tiles: the ring laps twice and ends mid-lap.
# `full` carries both operand loads of a stage (init_count=2: each TMA load is one arrival);
# `empty` is released by the MMA's completion commit, so its first lap passes without a release.
@cake.schedule(target="sm_100a")
def ring4_static(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d):
    pool = lm.smem(131072)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])     # one warpgroup: tcgen05.ld lane quarters 0-3
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, 10):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(0, k), stage=k % 4, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 4, barrier=full)

    with mma:
        for k in lm.range(0, 10):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sb[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)  # releases the stage once this MMA has read it
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
