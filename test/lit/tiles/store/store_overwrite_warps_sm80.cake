# CAKE-D011: on sm_80 each warp's mma.sync reads the stages with its own ldmatrix, so the next
# K step's stores by any warp race the warps still reading; nothing syncs the role between.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def loop80(lm, A: LM.tensor2d, B: LM.tensor2d, O: LM.tensor2d, M: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64))
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        mt = lm.block_id(0)
        for k in lm.range(0, lm.max(lm.cdiv(K, 64), 1)):
            a = A.load(coords=(mt, k), shape=(64, 64), dtype=lm.bf16)
            sa[0].store(a.to(lm.bf16))
            b = B.load(coords=(0, k), shape=(64, 64), dtype=lm.bf16)
            sb[0].store(b.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(acc, sa, sb, init=(k == 0))
        O.store(acc, coords=(mt, 0))
# CHECK: store_overwrite_warps_sm80.cake:16:13: error: `store` overwrites `sa`, which the role's other warps may still be reading with the MMA at line 20: nothing syncs the role between that read and this write [CAKE-D011]
# CHECK-NEXT: {{^}}            sa[0].store(a.to(lm.bf16))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_overwrite_warps_sm80.cake:20:13: note: the MMA reads `sa` here, one instruction per warp
# CHECK-NEXT: {{^}}            lm.mma(acc, sa, sb, init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `lm.fence_proxy()` (it syncs the role's threads) before the write, after the MMA's last read
# CHECK: store_overwrite_warps_sm80.cake:18:13: error: `store` overwrites `sb`, which the role's other warps may still be reading with the MMA at line 20: nothing syncs the role between that read and this write [CAKE-D011]
# CHECK-NOT: error
