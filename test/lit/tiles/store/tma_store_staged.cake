# T.tma_store(view[s]): O through SMEM. The tile is stored into a 128b-swizzled stage, fenced,
# then one thread issues one bulk tensor store per 64-column block (the swizzle span) and
# commits the group; nothing waits there. The stage is written only before the store (no wait
# for a copy before it); the role's thread waits for the copy to have read the stage before
# the role ends.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def tmast(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tma2d, M: LM.i32, N: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    mt = lm.block_id(0)
    nt = lm.block_id(1)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    so = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(mt, 0), barrier=full)
        sb.tma_load(B, coords=(nt, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        so[0].store((acc + 1.0).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so[0], coords=(mt, nt))
# CHECK: const bool cake_leader = cake_warp == 4u && cake_lane_id() == 0u;  // issues the role's TMA copies
# CHECK-NOT: cake_tma_store_wait
# CHECK: // tma_store_staged.cake:30: O.tma_store(so[0], coords=(mt, nt))
# CHECK-NEXT: if (cake_leader) {
# CHECK-NEXT: const i32 cake_x0 = nt * 128, cake_x1 = mt * 128;
# CHECK-NEXT: const bool cake_in = (u64)cake_x1 < (u64)O.shape[0];  // the box's outer dimensions start inside the tensor
# CHECK-NEXT: if (cake_in && (u64)cake_x0 < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so, cake_x0, cake_x1);
# CHECK-NEXT: if (cake_in && (u64)(cake_x0 + 64) < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so + 16384u, cake_x0 + 64, cake_x1);
# CHECK-NEXT: cake_tma_store_commit();
# CHECK-NEXT: }
# CHECK-NEXT: if (cake_leader) cake_tma_store_wait_read<0>();  // the role's TMA stores have read their stages before the CTA's SMEM goes
