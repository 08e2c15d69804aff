# `lm.where` between two numbers takes the predicate's shape (a (1, N) column mask here),
# which then broadcasts against the accumulator.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# CHECK: cake_x[0] = (o_acc[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] * ((({{.*}} < 5) ? 1.0f : 0.0f));
@cake.schedule(target="sm_90a")
def chain(lm, Q: LM.tma2d, K: LM.tma2d, Vt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(49152)
    sq = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sk = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sv = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    s_acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o_acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sq.tma_load(Q, coords=(0, 0), barrier=full)
        sk.tma_load(K, coords=(0, 0), barrier=full)
        sv.tma_load(Vt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(s_acc, sq, sk, init=True)
        p = lm.exp2(s_acc)
        lm.mma(o_acc, p.to(lm.bf16), sv, init=True)
        O.tma_store((o_acc * lm.where(lm.col_index(o_acc) < 5, 1.0, 0.0)).to(lm.bf16), coords=(0, 0))


