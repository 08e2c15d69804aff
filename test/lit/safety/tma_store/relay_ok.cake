# A TMA store reads its stage asynchronously; where its role hands the stage to a role that
# rewrites it, the hand-off waits for the copy's read. Here the load role fills so[0] by TMA,
# the out role copies it out with `O.tma_store` and arrives on `empty`, the barrier the load
# role waits on before its refill: the out role's thread waits for its store groups to have
# read their stages (cp.async.bulk.wait_group.read 0) before that arrival, and again before
# the role ends (the CTA's SMEM must outlive the copy). Nothing waits after the store itself.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def relay(lm, C: LM.tma2d, O: LM.tma2d, N: LM.i32):
    pool = lm.smem(32768)
    so = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    out = lm.role(warps=[4])
    full = lm.barrier(count=1, prod=[load], cons=[out])
    empty = lm.barrier(count=1, prod=[out], cons=[load])
    with load:
        for t in lm.range(0, N):
            lm.wait(empty)
            so.tma_load(C, coords=(t, 0), barrier=full)
    with out:
        for t in lm.range(0, N):
            lm.wait(full)
            O.tma_store(so[0], coords=(t, 0))
            lm.arrive(empty)
# CHECK: // relay_ok.cake:25: O.tma_store(so[0], coords=(t, 0))
# CHECK-NEXT: {
# CHECK-NEXT: const i32 cake_x0 = 0, cake_x1 = t * 128;
# CHECK-NEXT: const bool cake_in = (u64)cake_x1 < (u64)O.shape[0];  // the box's outer dimensions start inside the tensor
# CHECK-NEXT: if (cake_in && (u64)cake_x0 < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so, cake_x0, cake_x1);
# CHECK-NEXT: if (cake_in && (u64)(cake_x0 + 64) < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so + 16384u, cake_x0 + 64, cake_x1);
# CHECK-NEXT: cake_tma_store_commit();
# CHECK-NEXT: }
# CHECK-NEXT: cake_tma_store_wait_read<0>();  // the TMA stores of `out` have read the bytes `so` rewrites
# CHECK-NEXT: // relay_ok.cake:26: lm.arrive(empty)
# CHECK-NEXT: cake_mbar_arrive(empty);
# CHECK-NEXT: }
# CHECK-NEXT: cake_tma_store_wait_read<0>();  // the role's TMA stores have read their stages before the CTA's SMEM goes
