# Near miss of acc_assign_discards.cake: the rescale `o_acc = o_acc * 0.5` reads `o_acc` first
# (nothing is discarded), and that read waits for the P·V wgmma (wait_group 0) before the
# registers are written.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# CHECK: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0],
# CHECK: cake_wgmma_commit();
# CHECK: cake_wgmma_wait<0>();
# CHECK: o_acc[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] = (o_acc[
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
    p_t = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sq.tma_load(Q, coords=(0, 0), barrier=full)
        sk.tma_load(K, coords=(0, 0), barrier=full)
        sv.tma_load(Vt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(s_acc, sq, sk, init=True)
        p_t = lm.exp2(s_acc)
        lm.mma(o_acc, p_t.to(lm.bf16), sv, init=True)
        o_acc = o_acc * 0.5
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))
