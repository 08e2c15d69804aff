# CAKE-S019: the epilogue strides by the number of blocks minus one: with a single block the
# step is 0 and the loop never ends.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, T: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=2, prod=[mma], cons=[load])
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    acc_empty = lm.barrier(count=1, prod=[epi], cons=[mma])

    with load:
        for t in lm.range(0, T):
            lm.wait(empty, stage=t % 2)
            sa.tma_load(A, coords=(t, 0), stage=t % 2, barrier=full)
            sb.tma_load(B, coords=(0, 0), stage=t % 2, barrier=full)

    with mma:
        for t in lm.range(0, T):
            lm.wait(acc_empty)
            lm.wait(full, stage=t % 2)
            lm.mma(acc, sa[t % 2], sb[t % 2], init=True)
            lm.commit(empty, stage=t % 2)
            lm.commit(acc_full)

    with epi:
        for t in lm.range(0, T, lm.num_blocks(0) - 1):
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(t, 0))
            lm.arrive(acc_empty)
# CHECK: {{.*}}loop_step.cake:33:9: error: the loop at line 33 steps by 0 (with T = 1): it never ends [CAKE-S019]
# CHECK-NEXT: {{^}}        for t in lm.range(0, T, lm.num_blocks(0) - 1):
# CHECK-NEXT: {{^}}        ^~~
# CHECK-NEXT: help: the step must be at least 1 for every launch, e.g. `lm.max(step, 1)`
# CHECK-NOT: [CAKE-S0
