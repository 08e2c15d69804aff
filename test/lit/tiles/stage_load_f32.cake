# An (M, N) f32 stage read into registers (`view[s].load()`) on sm_90a: each thread's column
# pairs of the wgmma layout by one 8-byte ld.shared.v2.f32 at the swizzled address a TMA load
# put them (a 128 x 32 block of a state, 128-byte swizzle: kda_decode_ring.cake), into f32
# registers that arithmetic reads directly; the stage is released right after the read.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit ptx | filecheck --check-prefix=PTX %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(16384)
    sx = pool.view(offset=0, shape=(128, 32), dtype=lm.f32, swizzle=128b)
    load = lm.role(warps=[4])
    math = lm.role(warps=[0, 1, 2, 3])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        lm.wait(empty)
    with math:
        lm.wait(full)
        x = sx[0].load()
        lm.arrive(empty)
        O.store(x * 2.0, coords=(0, 0))
# CHECK: // {{.*}}: x = sx[0].load()
# CHECK-NEXT: float x[2][16];  // (128, 32) f32 from SMEM
# CHECK: float cake_x[2];
# CHECK-NEXT: { const int cake_c = cake_cp; cake_lds_f32x2(cake_stage_addr<128u, 128u, 7u, 4u>(cake_ld,
# CHECK-SAME: cake_x[0], cake_x[1]); }
# CHECK-NEXT: { const int cake_c = cake_cp + 0; x[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] = cake_x[0]; }
# CHECK-NEXT: { const int cake_c = cake_cp + 1; x[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] = cake_x[1]; }
# CHECK: // {{.*}}: lm.arrive(empty)
# CHECK: // {{.*}}: O.store(
# CHECK: x[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] * 2.0f
# PTX: ld.shared.v2.f32
