# CAKE-D011 on sm_90a: each warpgroup of `math` issues its own wgmma, both reading all of the B
# stage `sb`. Reading `acc` retires the warpgroup's own wgmma (CAKE-S041 holds), not the other
# warpgroup's, so its store into `sb` races the lagging reader until the role syncs. The A
# stage `sa` (128 rows: 64 per warpgroup, read and stored in the same layout) is private.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def restage(lm, A: LM.tma2d, B: LM.tma2d, R: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        O.store(acc, coords=(0, 0))
        sa[0].store(R.load(coords=(0, 0), shape=(128, 64), dtype=lm.bf16).to(lm.bf16))
        sb[0].store(R.load(coords=(0, 0), shape=(128, 64), dtype=lm.bf16).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(acc, sa, sb, init=True)
        O.store(acc, coords=(0, 0))
# CHECK: store_overwrite_warpgroups.cake:23:9: error: `store` overwrites `sb`, which the role's other warpgroups may still be reading with the MMA at line 20: nothing syncs the role between that read and this write [CAKE-D011]
# CHECK-NEXT: {{^}}        sb[0].store(R.load(coords=(0, 0), shape=(128, 64), dtype=lm.bf16).to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_overwrite_warpgroups.cake:20:9: note: the MMA reads `sb` here, one instruction per warpgroup
# CHECK-NEXT: {{^}}        lm.mma(acc, sa, sb, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `lm.fence_proxy()` (it syncs the role's threads) before the write, after the MMA's last read
# CHECK-NOT: error
