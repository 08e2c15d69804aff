# CAKE-D009: a stage written by `store` and copied out by TMA with no lm.fence_proxy() between.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
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
        O.tma_store(so[0], coords=(mt, nt))
# CHECK: tma_store_no_fence.cake:23:9: error: `tma_store` reads `so` through the async proxy, but `so` was written with ordinary stores at line 22 and no `lm.fence_proxy()` orders that write first [CAKE-D009]
# CHECK-NEXT: {{^}}        O.tma_store(so[0], coords=(mt, nt))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tma_store_no_fence.cake:22:9: note: `so` is written here
# CHECK-NEXT: {{^}}        so[0].store((acc + 1.0).to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `lm.fence_proxy()` after the write at line 22
# CHECK-NOT: error
