# A column reduction (axis=0) on mma.sync where the warp grid splits the accumulator's columns
# too (4 warps as 2x2 over a 64x64 tile): each column block's wm = 2 warps meet in SMEM
# scratch, indexed by the warp's row position and the column's own index. Found by the rule
# audit (issue 17): verify refused it with CAKE-H020 as if it were a row reduction, which is
# the form a shuffle cannot finish across warps.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_80")
def k(lm, A: LM.tensor2d, B: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(16640)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16)
    sr = pool.view(offset=16384, shape=(1, 64), dtype=lm.f32)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        sa[0].store(A.load(coords=(0, 0), shape=(64, 64), dtype=lm.bf16).to(lm.bf16))
        sb[0].store(B.load(coords=(0, 0), shape=(64, 64), dtype=lm.bf16).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(acc, sa, sb, init=True)
        sr[0].store(acc.sum(axis=0))
        O.store(acc, coords=(0, 0))
# CHECK: // colred_mma_sync_grid.cake:22: sr[0].store(acc.sum(axis=0))
# CHECK: __shared__ float cake_colred_[4][64];
# CHECK: cake_colred_[(i32)((cake_warp - 0u) % 2u)][((i32)((cake_warp - 0u) / 2u * 32u) + 8 * (cake_c / 2) + 2 * (i32)(cake_lane_id() % 4u) + cake_c % 2)] = tile[cake_c];
# CHECK: for (int cake_w = 1; cake_w < 2; ++cake_w)
