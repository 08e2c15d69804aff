# CAKE-S023 by an assignment: reading `s_acc` retires the P·V wgmma (groups complete in order),
# so `o_acc = p_t` races nothing, but it throws away the sums of that MMA, which nothing read.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
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
        lm.mma(s_acc, sq, sk, init=True)
        p_t = lm.exp2(s_acc)
        o_acc = p_t
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))
# CHECK: acc_assign_discards.cake:27:9: error: the assignment at line 27 starts `o_acc` afresh (init=True) before anything reads the partial sums of the MMA at line 24: they are discarded [CAKE-S023]
# CHECK-NEXT: {{^}}        o_acc = p_t
# CHECK-NEXT: {{^}}        ^~~~~
# CHECK-NEXT: acc_assign_discards.cake:24:9: note: `o_acc` is written here and not read before line 27
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p_t.to(lm.bf16), sv, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: acc_assign_discards.cake:14:13: note: `o_acc` is declared here
# CHECK-NEXT: {{^}}    o_acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: read `o_acc` before assigning it (the epilogue, or a rescale `o_acc = o_acc * alpha`), or drop the MMAs whose sums it discards
# CHECK-NOT: error
