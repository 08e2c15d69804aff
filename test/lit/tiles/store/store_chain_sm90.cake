# view[s].store on sm_90a: E = (A·Bᵀ).to(bf16) written into a 128b-swizzled stage in the wgmma
# fragment layout, fenced (each thread, then the role's named barrier), then read by wgmma.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def chain(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(0, 0))
# CHECK: // store_chain_sm90.cake:25: se[0].store(acc.to(lm.bf16))
# CHECK-NEXT: cake_wgmma_wait<0>();  // no wgmma of this role still reads the view
# CHECK: CakeOutBf16::sts_pair(cake_stage_addr<128u, 128u, 7u, 2u>(cake_st, (u32)((i32)((cake_warp - 4u) / 4u) * 64 + 64 * (cake_r / 2) + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() / 4u) + 8 * (cake_r % 2)), (u32)(8 * (cake_c / 2) + 2 * (i32)(cake_lane_id() % 4u) + cake_c % 2)), cake_x[0], cake_x[1]);
# CHECK: // store_chain_sm90.cake:26: lm.fence_proxy()
# CHECK-NEXT: cake_fence_proxy_async();
# CHECK-NEXT: cake_named_barrier_sync(2u, 256u);  // every thread of `math` has written and fenced its part
# CHECK-NEXT: // store_chain_sm90.cake:27: lm.mma(out, se, sd, init=True)
