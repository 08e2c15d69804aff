# A 2-stage ring over a static but huge K (2^31 - 1 tiles): the verifier checks it with a
# shortened loop of the same residue modulo the ring's period instead of unrolling it, and
# the wait parities are derived in closed form.
@cake.schedule(target="sm_100a")
def long_static_ring(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=2, prod=[mma], cons=[load])
    done = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, 2147483647):
            lm.wait(empty, stage=k % 2)
            sa.tma_load(A, coords=(0, k), stage=k % 2, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 2, barrier=full)

    with mma:
        for k in lm.range(0, 2147483647):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
            lm.commit(empty, stage=k % 2)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
