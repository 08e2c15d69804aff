# A bf16 lm.regs tile: assigned a converted expression, held two columns per u32 (set halves as
# it is written), read back as register-A fragments and as f32 (get halves).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def regs16(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d, R: LM.tensor2d, T: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p = lm.regs(shape=(128, 128), dtype=lm.bf16, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        p = (acc * 0.5).to(lm.bf16)
        for t in lm.range(0, lm.max(T, 1)):
            lm.mma(out, p, sd, init=(t == 0))
        O.store(out, coords=(0, 0))
        R.store(p.to(lm.f32).max(axis=1), coords=(0, 0))
# CHECK: u32 p[1][32];  // (128, 128) lm.regs, 16-bit pairs
# A column pair at a time: both elements, then the packed register in one convert.
# CHECK: { const int cake_c = cake_cp + 1; cake_x[1] = (acc[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] * 0.5f); }
# CHECK-NEXT: { const int cake_c = cake_cp; p[cake_r / 2][2 * (cake_c / 2) + cake_r % 2] = CakeOutBf16::pack(cake_x[0], cake_x[1]); }
# CHECK: { const int cake_c = cake_cp + 0; cake_x[0] = CakeOutBf16::get(p[cake_r / 2][2 * (cake_c / 2) + cake_r % 2], cake_c % 2); }
# CHECK: cake_wgmma_m64n64k16_f32_bf16_bf16_rs(
