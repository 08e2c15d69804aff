# view[s].store on sm_90a: E = (A·Bᵀ).to(bf16) written into a 128b-swizzled stage from the wgmma
# fragments by stmatrix.x4 (four 8x8 matrices per warp and 16-column block, each lane addressing
# one swizzled row chunk), fenced (each thread, then the role's named barrier), read by wgmma.
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
# CHECK: // store_chain_sm90.cake:26: se[0].store(acc.to(lm.bf16))
# CHECK-NEXT: cake_wgmma_wait<1>();  // no wgmma of this role still reads the view
# CHECK: __syncwarp();  // stmatrix is .sync.aligned
# CHECK: const int cake_r = 2 * cake_f + 1; const int cake_cp = 4 * cake_j + 2;
# CHECK: cake_m[3] = CakeOutBf16::pack(cake_x[0], cake_x[1]);
# CHECK-NEXT: }
# CHECK-NEXT: cake_stmatrix_x4(cake_stage_addr<128u, 128u, 7u, 2u>(cake_st, (u32)((i32)((cake_warp - 4u) / 4u) * 64 + 64 * cake_f + 16 * (i32)(cake_warp % 4u) + (i32)(cake_lane_id() % 8u) + 8 * (i32)((cake_lane_id() / 8u) % 2u)), (u32)(8 * (2 * cake_j + (i32)(cake_lane_id() / 16u)))), cake_m);
# CHECK: // store_chain_sm90.cake:27: lm.fence_proxy()
# CHECK-NEXT: cake_fence_proxy_async();
# CHECK-NEXT: cake_named_barrier_sync(2u, 256u);  // every thread of `math` has written and fenced its part
# CHECK-NEXT: // store_chain_sm90.cake:28: lm.mma(out, se, sd, init=True)
