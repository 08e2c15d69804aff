# CAKE-S005: the MMA role commits to `full` (a typo for `empty`), a barrier whose only
# producer is the load role.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=3, prod=[mma], cons=[load])
    done = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(full, stage=k % 3)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}role_completes.cake:28:13: error: role mma completes barrier `full` (`lm.commit`) but is not one of its producers [load] [CAKE-S005]
# CHECK-NEXT: {{^}}            lm.commit(full, stage=k % 3)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}role_completes.cake:14:12: note: `full` is declared here with prod=[load], cons=[mma]
# CHECK-NEXT: {{^}}    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add mma to prod=[...] of `full`, or complete the barrier that role mma produces
# CHECK-NOT: [CAKE-S0
