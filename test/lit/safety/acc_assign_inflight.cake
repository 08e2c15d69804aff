# CAKE-S042: `o_acc = 0.0` right after the P·V wgmma into `o_acc`: the assignment reads nothing,
# so nothing waits for the wgmma, which still writes those registers (issue 14: an `O` rescale
# racing with an in-flight P·V). acc_assign_inflight_ok.cake is the near miss.
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
        o_acc = 0.0
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))
# CHECK: acc_assign_inflight.cake:26:9: error: role math assigns `o_acc` at line 26 while the MMA at line 25 may still accumulate into it: the wgmma writes those registers until it retires [CAKE-S042]
# CHECK-NEXT: {{^}}        o_acc = 0.0
# CHECK-NEXT: {{^}}        ^~~~~
# CHECK-NEXT: acc_assign_inflight.cake:25:9: note: this MMA accumulates into `o_acc` asynchronously
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p_t.to(lm.bf16), sv, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: read `o_acc` first, which waits for the MMA (`o_acc = o_acc * alpha` does), or assign before the MMA
# CHECK-NOT: error
