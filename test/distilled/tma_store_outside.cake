# Distilled from the H200 (2026-12-02): fmha_fwd_sm90_overlap.cake stores each tile's O under
# the next tile's first GEMM, so a CTA's first epilogue has no tile: it aimed that copy past
# O's end (row B·tiles_m, and a column that came out negative: `%` truncates, (−1 − c) % n
# < 0). Every launch faulted at that store (cudaErrorIllegalInstruction at the
# cp.async.bulk.tensor store under compute-sanitizer) and poisoned the context, although
# docs/language.md promises a staged TMA store writes nothing outside its tensor. A box whose
# start lies outside the tensor is now never issued (one unsigned compare per dimension
# against the launch's extent); a box that only crosses the far edge is still clipped by the
# TMA unit. Here a CTA stores the tile before its own, and the first one's is at row −1.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# CHECK: // tma_store_outside.cake:41: O.tma_store(so[0], coords=(mt - 1, nt))
# CHECK-NEXT: if (cake_leader) {
# CHECK-NEXT: const i32 cake_x0 = nt * 128, cake_x1 = (mt - 1) * 128;
# CHECK-NEXT: const bool cake_in = (u64)cake_x1 < (u64)O.shape[0];  // the box's outer dimensions start inside the tensor
# CHECK-NEXT: if (cake_in && (u64)cake_x0 < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so, cake_x0, cake_x1);
# CHECK-NEXT: if (cake_in && (u64)(cake_x0 + 64) < (u64)O.shape[1]) cake_tma_store_2d(&O_tmap0, so + 16384u, cake_x0 + 64, cake_x1);
# CHECK-NEXT: cake_tma_store_commit();
# CHECK-NEXT: }
@cake.schedule(target="sm_90a")
def store_before(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tma2d, M: LM.i32, N: LM.i32):
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
        O.tma_store(so[0], coords=(mt - 1, nt))
