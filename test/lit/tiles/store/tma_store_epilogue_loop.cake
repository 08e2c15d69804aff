# A persistent epilogue through SMEM: each tile is stored into so[0] and copied out by TMA, and
# the copy runs under the next tile's MMAs. Before the next tile's `store` rewrites so[0], the
# role's thread waits for the copy to have read it (cp.async.bulk.wait_group.read 0) and the
# role meets it at its named barrier; nothing waits after the TMA store itself, and the role
# waits once more before it ends.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def epi(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tma2d, T: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    so = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        for t in lm.range(0, T):
            lm.wait(empty)
            sa.tma_load(A, coords=(t, 0), barrier=full)
            sb.tma_load(B, coords=(0, 0), barrier=full)
    with math:
        for t in lm.range(0, T):
            lm.wait(full)
            lm.mma(acc, sa, sb, init=True)
            lm.commit(empty)
            so[0].store(acc.to(lm.bf16))
            lm.fence_proxy()
            O.tma_store(so[0], coords=(t, 0))
# CHECK: // tma_store_epilogue_loop.cake:29: lm.commit(empty)
# CHECK-NEXT: cake_wgmma_wait<0>();
# CHECK-NEXT: if (cake_wg_leader) cake_mbar_arrive(empty);
# CHECK-NEXT: if (cake_leader) cake_tma_store_wait_read<0>();  // the TMA stores of `math` have read the bytes `so` rewrites
# CHECK-NEXT: cake_named_barrier_sync(2u, 256u);
# CHECK-NEXT: // tma_store_epilogue_loop.cake:30: so[0].store(acc.to(lm.bf16))
# CHECK: // tma_store_epilogue_loop.cake:32: O.tma_store(so[0], coords=(t, 0))
# CHECK-NEXT: if (cake_leader) {
# CHECK-NEXT: const i32 cake_x0 = 0, cake_x1 = t * 128;
# CHECK-NEXT: const bool cake_in = (u64)cake_x1 < (u64)O.shape[0];  // the box's outer dimensions start inside the tensor
# CHECK-NEXT: if (cake_in && (u64)cake_x0 < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so, cake_x0, cake_x1);
# CHECK-NEXT: if (cake_in && (u64)(cake_x0 + 64) < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so + 16384u, cake_x0 + 64, cake_x1);
# CHECK-NEXT: cake_tma_store_commit();
# CHECK-NEXT: }
# CHECK-NEXT: }
# CHECK-NEXT: if (cake_leader) cake_tma_store_wait_read<0>();  // the role's TMA stores have read their stages before the CTA's SMEM goes
