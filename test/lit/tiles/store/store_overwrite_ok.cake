# The near miss of store_overwrite.cake: the MMA role commits each read of `se` to an empty
# barrier and the epilogue waits on it (its first wait passes) before storing again.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def war100_ok(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    out = lm.tmem(cols=128, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=3)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    e_full = lm.barrier(count=1, prod=[epi], cons=[mma])
    out_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    e_empty = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        lm.commit(acc_full)
        for t in lm.range(0, 2):
            lm.wait(e_full)
            lm.mma(out, se, sd, init=(t == 0))
            lm.commit(e_empty)
        lm.commit(out_full)
    with epi:
        lm.wait(acc_full)
        for t in lm.range(0, 2):
            lm.wait(e_empty)
            se[0].store((acc * (t + 1)).to(lm.bf16))
            lm.fence_proxy()
            lm.arrive(e_full)
        lm.wait(out_full)
        O.store(out.to(lm.f32), coords=(0, 0))
