# CAKE-S001: the MMA role's static two-step warm-up assumes at least two K tiles. Every
# k_tiles >= 2 works; with k_tiles = 1 the second warm-up wait is never satisfied.
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
        for k in lm.range(0, 2):              # a static two-step warm-up ...
            lm.wait(full, stage=k)
            lm.mma(acc, sa[k], sb[k], init=(k == 0))
            lm.commit(empty, stage=k)
        for k in lm.range(2, k_tiles):        # ... then the steady state
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3])
            lm.commit(empty, stage=k % 3)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}deadlock_trip_count.cake:26:13: error: deadlock: role mma waits on full[1] (phase 0) at line 26 with K = 0; no role ever completes full[1] [CAKE-S001]
# CHECK-NEXT: {{^}}            lm.wait(full, stage=k)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}deadlock_trip_count.cake:14:12: note: `full` is declared here
# CHECK-NEXT: {{^}}    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: every wait needs a phase completion: check that the roles' trip counts and stage indices match
# CHECK-NOT: [CAKE-S0
