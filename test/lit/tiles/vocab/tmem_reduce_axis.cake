# A TMEM accumulator's argmax runs along each row, as a register tile's does.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def bad_axis(lm, X: LM.tma2d, W: LM.tma2d, I: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        lm.commit(done)
    with epi:
        lm.wait(done)
        I.store(acc.argmax(axis=0), coords=(0, 0))
# CHECK: tmem_reduce_axis.cake:23:33: error: `.argmax` reduces along axis=1 (each row), got axis=0 [CAKE-T010]
