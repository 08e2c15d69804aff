# view[s].store on sm_100a: the epilogue role reads the TMEM accumulator (tcgen05.ld, one row per
# thread), writes it as bf16 into a 128b-swizzled stage, fences, meets at its named barrier and
# hands the stage to the MMA role, whose tcgen05.mma reads it as its A operand.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def chain100(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    out = lm.tmem(cols=128, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=3)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    e_full = lm.barrier(count=1, prod=[epi], cons=[mma])
    out_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        lm.commit(acc_full)
        lm.wait(e_full)
        lm.mma(out, se, sd, init=True)
        lm.commit(out_full)
    with epi:
        lm.wait(acc_full)
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.arrive(e_full)
        lm.wait(out_full)
        O.store(out.to(lm.f32), coords=(0, 0))
# CHECK: // store_chain_sm100.cake:36: se[0].store(acc.to(lm.bf16))
# CHECK: cake_tmem_ld_32x32b_x32(cake_taddr0 + (u32)cake_c0, cake_t0);
# CHECK: CakeOutBf16::sts_pair(cake_stage_addr<128u, 128u, 7u, 2u>(cake_st, (u32)((i32)(32u * (cake_warp % 4u) + cake_lane_id())), (u32)cake_c), cake_x[0], cake_x[1]);
# CHECK: // store_chain_sm100.cake:37: lm.fence_proxy()
# CHECK-NEXT: cake_fence_proxy_async();
# CHECK-NEXT: cake_named_barrier_sync(3u, 128u);  // every thread of `epi` has written and fenced its part
