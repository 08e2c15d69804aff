# The mma.sync fragment layout (sm_80 family, and a role of sm_100a accumulating in
# registers): a fused epilogue of a register accumulator, masked by index tiles, stored
# converted; an (M, 1) reduction in a role whose warps hold whole rows (1 warp).
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
# RUN: cakec emit %s --target sm_80 --emit cuda -o %t80.cu
# RUN: cakec emit %s --target sm_100a --emit cuda -o %t100.cu
@cake.schedule(target="sm_120a")
def k(lm, X: LM.tma2d, W: LM.tma2d, C: LM.tma2d, Bias: LM.tensor2d, R: LM.tensor2d, N: LM.i32, alpha: LM.f32):
    pool = lm.smem(32768)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sx.copy_load(X, coords=(0, 0), barrier=full)
        sw.copy_load(W, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        bias = Bias.load(coords=(0, 0), shape=(1, 64), dtype=lm.f32)
        row = lm.row_index(acc, base=0)
        col = lm.col_index(acc, base=0)
        p = lm.where(col > row or col >= N, 0.0, lm.silu(acc * alpha + bias))
        R.store(p.sum(axis=1), coords=(0, 0))
        C.tma_store(p.to(lm.bf16), coords=(0, 0))
# CHECK: float p[4][8][4];  // (64, 64)
# CHECK: p[cake_r / 2][cake_c / 2][2 * (cake_r % 2) + cake_c % 2] = {{.*}}cake_silu(fmaf((acc[cake_r / 2][cake_c / 2][2 * (cake_r % 2) + cake_c % 2]), alpha, bias[cake_c]))
# CHECK: __shfl_xor_sync(0xffffffffu, cake_a, 1);
# CHECK: __shfl_xor_sync(0xffffffffu, cake_a, 2);
# CHECK: if (cake_w) cake_store_row<2, float>(cake_x, R, cake_at,
# CHECK: cake_block_store_pair<2, CakeOutBf16>(C, cake_b,
