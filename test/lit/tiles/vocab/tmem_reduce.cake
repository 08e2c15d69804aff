# sm_100a: the reductions of a TMEM accumulator named directly (`acc.sum(axis=1)`, as of a
# register tile): the region is read by tcgen05.ld where the call stands, as in tile
# arithmetic; a row's reduction stays in its thread (no shuffle: one row per thread).
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, W: LM.tma2d, R: LM.tensor2d, I: LM.tensor2d):
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
        R.store(acc.sum(axis=1) + acc.max(axis=1), coords=(0, 0))
        I.store(acc.argmin(axis=1), coords=(0, 0))
# CHECK: cake_tmem_ld_32x32b_x32(
# CHECK: cake_p[cake_c % 4] = fmaxf(cake_p[cake_c % 4], cake_x);
# CHECK-NOT: __shfl_xor_sync
