# Cross-role reuse: role load fills `sk` by TMA, role math reads it by MMA, then stores
# into `sx` (in `sk`'s bytes) after the wait that the TMA completes, and releases the slot
# only once it read `o` (which retires the MMA on `sx`): the next TMA into `sk` is ordered.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tma2d, K: LM.tma2d, O: LM.tensor2d, n: LM.i32):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    load = lm.role(warps=[4])
    math = lm.role(warps=[0, 1, 2, 3])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        for i in lm.range(0, n):
            lm.wait(empty)
            sk.tma_load(K, coords=(i, 0), barrier=full)
            sq.tma_load(Q, coords=(i, 0), barrier=full)
    with math:
        for i in lm.range(0, n):
            lm.wait(full)
            lm.mma(s, sq[0], sk[0], init=True)
            sx[0].store(s.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
            O.store(o.to(lm.bf16), coords=(i, 0))
            lm.arrive(empty)
