# Two MMAs chained through shared memory on sm_80 (mma.sync): O = bf16(A·Bᵀ)·Dᵀ, the smallest
# back-to-back GEMM (attention's shape without its softmax). One role of four warps stages
# every operand itself (`T.load` into registers, `view[s].store` into SMEM) and reads it back
# with ldmatrix, so every SMEM hand-off is between warps of the same role, ordered by
# `lm.fence_proxy()` (on sm_80 the role's named barrier; no proxy fence exists there):
#   * after the stores, before the MMA that reads the other warps' rows (CAKE-D009 without it);
#   * before the next K step's stores, after every warp's MMA has read the stage (CAKE-D011).
# bench/broken/sm80_missing_fence.cake drops the first of them: the race racecheck reports.
# A: [M, K], B: [64, K], D: [64, 64] bf16 (row-major); O: [M, 64] f32. Any M, K ≥ 1.
@cake.schedule(target="sm_80")
def chain_sm80(lm, A: LM.tensor2d, B: LM.tensor2d, D: LM.tensor2d, O: LM.tensor2d, M: LM.i32,
               K: LM.i32):
    lm.grid(lm.cdiv(M, 64))
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16)
    sd = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16)
    se = pool.view(offset=24576, shape=(64, 64), dtype=lm.bf16)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    out = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        mt = lm.block_id(0)
        d = D.load(coords=(0, 0), shape=(64, 64), dtype=lm.bf16)
        sd[0].store(d.to(lm.bf16))
        for k in lm.range(0, lm.max(lm.cdiv(K, 64), 1)):
            lm.fence_proxy()                       # every warp has read the last step's stages
            a = A.load(coords=(mt, k), shape=(64, 64), dtype=lm.bf16)
            sa[0].store(a.to(lm.bf16))
            b = B.load(coords=(0, k), shape=(64, 64), dtype=lm.bf16)
            sb[0].store(b.to(lm.bf16))
            lm.fence_proxy()                       # every warp's rows are written
            lm.mma(acc, sa, sb, init=(k == 0))
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(mt, 0))
