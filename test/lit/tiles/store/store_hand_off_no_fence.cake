# CAKE-D009: a stage written by `store` handed to the MMA role by lm.arrive without lm.fence_proxy().
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
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
        lm.arrive(e_full)
        lm.wait(out_full)
        O.store(out.to(lm.f32), coords=(0, 0))
# CHECK: store_hand_off_no_fence.cake:33:9: error: `lm.arrive` hands `se` to the roles waiting on `e_full`, but `se` was written with ordinary stores at line 32 and no `lm.fence_proxy()` orders that write before the async-proxy read at line 28 [CAKE-D009]
# CHECK-NEXT: {{^}}        lm.arrive(e_full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_hand_off_no_fence.cake:32:9: note: `se` is written here
# CHECK-NEXT: {{^}}        se[0].store(acc.to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_hand_off_no_fence.cake:28:9: note: `lm.mma` reads `se` here
# CHECK-NEXT: {{^}}        lm.mma(out, se, sd, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `lm.fence_proxy()` after the write at line 32, before the arrival
# CHECK-NOT: error
