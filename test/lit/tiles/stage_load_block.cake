# An (M, N) bf16 stage read into registers (`view[s].load()`) on sm_90a: whole 16-column blocks
# as tall as the role's fragments by ldmatrix.x4 into the packed accumulator layout (X, a
# 128 x 64 tile), any other tile pair by pair at the swizzled addresses (Y, 128 x 8); both
# widened to f32 by `.to(lm.f32)` where the store reads them; the stage is released right
# after the read. Builds through NVRTC.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit ptx | filecheck --check-prefix=PTX %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, Y: LM.tma2d, O: LM.tensor2d, P: LM.tensor2d):
    pool = lm.smem(18432)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sy = pool.view(offset=16384, shape=(128, 8), dtype=lm.bf16, swizzle=None)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sy.tma_load(Y, coords=(0, 0), barrier=full)
        lm.wait(empty)
    with math:
        lm.wait(full)
        x = sx[0].load()
        y = sy[0].load()
        lm.arrive(empty)
        O.store(x.to(lm.f32) * 2.0, coords=(0, 0))
        P.store(y.to(lm.f32) + 1.0, coords=(0, 0))
# CHECK: // {{.*}}: x = sx[0].load()
# CHECK-NEXT: u32 x[1][16];  // (128, 64) bf16 from SMEM, two columns per register
# CHECK: __syncwarp();  // ldmatrix is .sync.aligned
# CHECK: for (int cake_f = 0; cake_f < 1; ++cake_f) {
# CHECK: for (int cake_j = 0; cake_j < 4; ++cake_j) {
# CHECK: cake_ldmatrix_x4(cake_stage_addr<128u, 128u, 7u, 2u>(cake_ld, (u32)((i32)((cake_warp - 4u) / 4u) * 64 + 64 * cake_f + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() % 8u) + 8 * (i32)((cake_lane_id() / 8u) % 2u)), (u32)(8 * (2 * cake_j + (i32)(cake_lane_id() / 16u)))), x[cake_f][4 * cake_j + 0], x[cake_f][4 * cake_j + 1], x[cake_f][4 * cake_j + 2], x[cake_f][4 * cake_j + 3]);
# CHECK: // {{.*}}: y = sy[0].load()
# CHECK-NEXT: u32 y[1][2];  // (128, 8) bf16 from SMEM, two columns per register
# CHECK: y[cake_r / 2][2 * (cake_c / 2) + cake_r % 2] = cake_lds_b32(cake_stage_addr<128u, 16u, 0u, 2u>(cake_ld,
# CHECK: // {{.*}}: lm.arrive(empty)
# CHECK: // {{.*}}: O.store(
# CHECK: CakeOutBf16::get(x[cake_r / 2][2 * (cake_c / 2) + cake_r % 2], cake_c % 2)) * 2.0f)
# CHECK: // {{.*}}: P.store(
# CHECK: CakeOutBf16::get(y[cake_r / 2][2 * (cake_c / 2) + cake_r % 2], cake_c % 2)) + 1.0f)
# PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
