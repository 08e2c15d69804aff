# RUN: cakec emit %s --emit cuda 2>&1 | filecheck %s
# A 64-row TMEM accumulator (tcgen05.mma M=64): row m lives in lane m % 16 + 32 (m / 16), so
# lane l < 16 of the warp reading quarter q holds row 16 q + l and lanes 16-31 store nothing.
@cake.schedule(target="sm_100a")
def tmem_store(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d):
    lm.grid(1)
    pool = lm.smem(49152)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=1, swizzle=128b)
    sb = pool.view(offset=16384, shape=(256, 64), dtype=lm.bf16, stage=1, swizzle=128b)
    acc = lm.tmem(cols=0, width=256, shape=(64, 256), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epilogue = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epilogue], init_count=1)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        lm.commit(done)
    with epilogue:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: cake_tcgen05_mma_f16(cake_tmem, {{.*}}, 0x{{[0-9a-f]*}}u, 0u);
# CHECK: const i32 cake_row = cake_lane_id() < 16u ? {{.*}}(i32)(16u * cake_quarter + cake_lane_id()) : 0x7fffffff;
# CHECK: cake_store_tmem_row<256, CakeOutBf16, float>(cake_tmem + ((32u * cake_quarter) << 16), C, cake_row, cake_col);
