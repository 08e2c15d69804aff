# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec inspect %s | filecheck --check-prefix=LEDGER %s
# wgmma's register A: S = Q·Kᵀ from SMEM, then O = exp2(S)·V with P = exp2(S) converted to
# bf16 in registers, packed two per register in the accumulator's own layout (K step k takes
# column octets 2k and 2k + 1), issued as the RS form; no descriptor for A.
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
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))

# CHECK: // wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16: D (+)= A[64x16] . B[16x64], A from registers, B from an SMEM descriptor;
# CHECK: __device__ __forceinline__ void cake_wgmma_m64n64k16_f32_bf16_bf16_rs(float (&d)[32], const u32 (&a)[4], u64 b, u32 scale_d) {
# CHECK: // register_a_sm90.cake:26: lm.mma(o_acc, p.to(lm.bf16), sv, init=True)
# CHECK: cake_wgmma_wait<0>();
# CHECK-NEXT: cake_fence_regs(s_acc[0]);
# CHECK-NEXT: u32 [[PA:cake_pa_?[0-9]*]][1][4][4];  // A: register-A fragments of `p`, bf16 pairs
# CHECK: cake_x[0] = cake_ex2(s_acc[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2]);
# CHECK: [[PA]][cake_r / 2][cake_cp / 4][cake_r % 2 + 2 * ((cake_cp / 2) % 2)] = CakeOutBf16::pack(cake_x[0], cake_x[1]);
# CHECK: cake_wgmma_fence();
# CHECK-NEXT: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0], [[PA]][0][0], (((u64)0x{{[0-9a-f]+}}u << 32) | (u32)(0x{{[0-9a-f]+}}u + (((cake_b) & 0x3FFFFu) >> 4))), 0u);
# CHECK-NEXT: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0], [[PA]][0][1], (((u64)0x{{[0-9a-f]+}}u << 32) | (u32)(0x{{[0-9a-f]+}}u + (((cake_b) & 0x3FFFFu) >> 4) + 2u)), 1u);
# CHECK-NEXT: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0], [[PA]][0][2], (((u64)0x{{[0-9a-f]+}}u << 32) | (u32)(0x{{[0-9a-f]+}}u + (((cake_b) & 0x3FFFFu) >> 4) + 4u)), 1u);
# CHECK-NEXT: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(o_acc[0], [[PA]][0][3], (((u64)0x{{[0-9a-f]+}}u << 32) | (u32)(0x{{[0-9a-f]+}}u + (((cake_b) & 0x3FFFFu) >> 4) + 6u)), 1u);
# CHECK-NEXT: cake_wgmma_commit();

# LEDGER: "a": "registers",
# LEDGER-NEXT: "b": "sv",
# LEDGER-NOT: "a_desc"
# LEDGER: "b_desc"
