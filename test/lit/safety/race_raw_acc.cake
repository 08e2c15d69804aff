# CAKE-S002: the epilogue reads the TMEM accumulator without waiting for the MMA role's
# completion commit.
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
            lm.commit(empty, stage=k % 3)
        lm.commit(done)

    with epi:
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}race_raw_acc.cake:32:21: error: role epi reads `acc` at line 32 while the MMA at line 27 (role mma) may still write it with K = 0 [CAKE-S002]
# CHECK-NEXT: {{^}}        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK-NEXT: {{^}}                    ^~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}race_raw_acc.cake:27:13: note: role mma writes `acc` here
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: have role mma `lm.commit` to a barrier after its MMAs and wait on that barrier in role epi first
# CHECK-NOT: [CAKE-S0
