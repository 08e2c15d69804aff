# sm_100a: tile expressions over a TMEM accumulator in the row-per-thread layout. A row
# reduction is per thread (no shuffle); the TMEM columns are loaded 32 at a time inside the
# column loop of each consumer; a masked, biased GELU tile is stored converted to bf16.
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, W: LM.tma2d, Bias: LM.tensor2d, O: LM.tensor2d, R: LM.tensor2d, N: LM.i32):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    m_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sw.tma_load(W, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        lm.commit(done)
    with epi:
        lm.wait(done)
        bias = Bias.load(coords=(0, 0), shape=(1, 64), dtype=lm.f32)
        col = lm.col_index(acc, base=0)
        m_i = lm.where(col < N, acc, -lm.inf).max(axis=1)
        R.store(lm.exp2(acc - m_i).sum(axis=1), coords=(0, 0))
        O.store(lm.gelu(acc + bias).to(lm.bf16), coords=(0, 0))
# CHECK: float tile;  // (128, 1)
# CHECK: cake_tmem_ld_32x32b_x32(cake_taddr0 + (u32)cake_c0, cake_t0);
# CHECK: const int cake_c = cake_c0 + cake_j;
# CHECK-NEXT: const float cake_x = (((0 + cake_c) < N) ? __uint_as_float(cake_t0[cake_c - cake_c0]) : -__int_as_float(0x7f800000));
# CHECK-NEXT: cake_p[cake_c % 4] = fmaxf(cake_p[cake_c % 4], cake_x);
# CHECK-NOT: __shfl_xor_sync
# CHECK: cake_x[0] = cake_gelu((__uint_as_float(cake_t0[cake_c - cake_c0]) + bias[cake_c]));
# CHECK: cake_block_store_pair<2, CakeOutBf16>(O, cake_b, (i32)(32u * (cake_warp % 4u) + cake_lane_id()), cake_c, cake_x[0], cake_x[1]);
