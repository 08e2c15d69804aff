# The near miss of store_overwrite_warps_sm80.cake: `lm.fence_proxy()` before the stores syncs
# the role (every warp's mma.sync of the last K step has read the stages; mma.sync reads its
# operands before it returns, so nothing else must retire), and after them (CAKE-D009).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
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
            lm.fence_proxy()
            a = A.load(coords=(mt, k), shape=(64, 64), dtype=lm.bf16)
            sa[0].store(a.to(lm.bf16))
            b = B.load(coords=(0, k), shape=(64, 64), dtype=lm.bf16)
            sb[0].store(b.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(acc, sa, sb, init=(k == 0))
        O.store(acc, coords=(mt, 0))
# CHECK: // store_overwrite_warps_ok.cake:17: lm.fence_proxy()
# CHECK-NEXT: cake_named_barrier_sync({{[0-9]}}u, 128u);
# CHECK: // store_overwrite_warps_ok.cake:22: lm.fence_proxy()
# CHECK-NEXT: cake_named_barrier_sync({{[0-9]}}u, 128u);
