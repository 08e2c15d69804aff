# The register-A hand-offs that are ordered by construction (issue 14), pinned on the emitted
# code: (a) an accumulator read as the A operand right after the MMA that writes it (`s_acc` into
# the P·V): packing it waits for that wgmma (wait_group 0) first; (b) P reassigned while the P·V
# wgmma that read it is in flight (FA3's intra-warpgroup overlap): the wgmma reads the A
# fragments packed as it was issued, never `p_t`'s registers, so no wait is needed between.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# CHECK: cake_wgmma_m64n64k16_f32_bf16_bf16(s_acc[0],
# CHECK: cake_wgmma_commit();
# CHECK: lm.mma(o_acc, s_acc.to(lm.bf16), sv, init=True)
# CHECK-NEXT: {
# CHECK-NEXT: cake_wgmma_wait<0>();
# CHECK-NEXT: cake_fence_regs(s_acc[0]);
# CHECK-NEXT: u32 cake_pa_[1][4][4];  // A: register-A fragments of `s_acc`, bf16 pairs
# CHECK: lm.mma(o_acc, p_t.to(lm.bf16), sv)
# CHECK: u32 cake_pa_[1][4][4];  // A: register-A fragments of `p_t`, bf16 pairs
# CHECK: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0], cake_pa_[0][0],
# CHECK: cake_wgmma_commit();
# The two P·V groups stay in flight while `p_t` is written (reading `s_acc` waits for its own):
# CHECK: p_t = lm.exp2(s_acc) * 2.0
# CHECK-NEXT: cake_wgmma_wait<2>();
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
        lm.mma(o_acc, s_acc.to(lm.bf16), sv, init=True)
        p_t = lm.exp2(s_acc)
        lm.mma(o_acc, p_t.to(lm.bf16), sv)
        p_t = lm.exp2(s_acc) * 2.0
        o_acc = o_acc + p_t
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))
