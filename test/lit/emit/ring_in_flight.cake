# A 4-stage ring: each commit keeps the newest wgmma group in flight and releases the stage
# before it; a wait on the stage still held releases it first, and the loop's end releases
# the last one, so no wait ever blocks on an arrival its own role holds.
# RUN: cakec emit %s --emit cuda | filecheck %s
@cake.schedule(target="sm_90a")
def ring4(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(163840)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=32768, shape=(256, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1)
    acc = lm.regs(shape=(64, 256), dtype=lm.f32, role=math)
    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(lm.block_id(0), k), stage=k % 4, barrier=full)
            sb.tma_load(B, coords=(lm.block_id(1), k), stage=k % 4, barrier=full)
    with math:
        for k in lm.range(0, k_tiles):
            s = k % 4
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(k == 0))
            lm.commit(empty, stage=s)
        C.tma_store(acc.to(lm.bf16), coords=(lm.block_id(0), lm.block_id(1)))
# CHECK: for (u32 i = 0; i < 4u; ++i) cake_mbar_init(empty + 8u * i, 1);
# CHECK: u32 empty_phase = 0xfu;
# CHECK: u32 empty_held = ~0u;
# CHECK-NEXT: for (i32 k = 0; k < k_tiles; ++k) {
# CHECK-NEXT: const i32 s = k % 4;
# CHECK-NEXT: // ring_in_flight.cake:24: lm.wait(full, stage=s)
# CHECK-NEXT: if (empty_held == (u32)s) {
# CHECK-NEXT: cake_wgmma_wait<0>();
# CHECK-NEXT: if (empty_held != ~0u) {
# CHECK-NEXT: if (cake_wg_leader) cake_mbar_arrive(empty + 8u * empty_held);
# CHECK-NEXT: empty_held = ~0u;
# CHECK: // ring_in_flight.cake:26: lm.commit(empty, stage=s)
# CHECK-NEXT: cake_wgmma_wait<1>();
# CHECK-NEXT: if (empty_held != ~0u) {
# CHECK-NEXT: if (cake_wg_leader) cake_mbar_arrive(empty + 8u * empty_held);
# CHECK-NEXT: }
# CHECK-NEXT: empty_held = (u32)s;
# CHECK-NEXT: }
# CHECK-NEXT: cake_wgmma_wait<0>();
# CHECK-NEXT: if (empty_held != ~0u) {
# CHECK-NEXT: if (cake_wg_leader) cake_mbar_arrive(empty + 8u * empty_held);
# CHECK-NEXT: }
# CHECK-NEXT: // ring_in_flight.cake:27: C.tma_store(acc.to(lm.bf16), coords=(lm.block_id(0), lm.block_id(1)))
