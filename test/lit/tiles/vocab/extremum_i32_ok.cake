# lm.min / lm.max of i32 tiles (an argmax, an index tile) and integers: CUDA min/max per element.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def imax(lm, X: LM.tma2d, W: LM.tma2d, R: LM.tensor2d):
    pool = lm.smem(32768)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=8192, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        best = acc.argmax(axis=1)
        R.store(lm.max(lm.min(best, 100), lm.row_index(acc)), coords=(0, 0))
# CHECK: cake_v[cake_f][cake_h] = max(min(best[cake_r / 2][cake_r % 2], 100), (0 + (64 * (cake_r / 2) + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() / 4u) + 8 * (cake_r % 2))));
