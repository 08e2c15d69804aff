# Near miss of bounds_two_forms.cake: the roles write the K-tile count in two equal forms,
# lm.cdiv(K, 64) and (K + 63) // 64, and the epilogue takes its max before the cdiv rather
# than after it. Every bound is computed from the launch's K, so no explored launch gives the
# roles different trip counts (there is no false deadlock).
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=3, prod=[mma], cons=[load])
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    free = lm.barrier(count=1, prod=[epi], cons=[mma])

    with load:
        for k in lm.range(0, lm.max(lm.cdiv(K, 64), 1)):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, lm.max((K + 63) // 64, 1)):
            lm.wait(full, stage=k % 3)
            lm.wait(free)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=True)
            lm.commit(empty, stage=k % 3)
            lm.commit(done)

    with epi:
        for k in lm.range(0, lm.cdiv(lm.max(K, 1), 64)):
            lm.wait(done)
            C.tma_store(acc.to(lm.bf16), coords=(0, k))
            lm.arrive(free)
