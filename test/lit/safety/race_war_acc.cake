# CAKE-S003: a persistent loop over T tiles reuses the accumulator; the MMA role overwrites it
# for the next tile without waiting until the epilogue has read the previous one.
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

    with load:
        for t in lm.range(0, T):
            lm.wait(empty, stage=t % 2)
            sa.tma_load(A, coords=(t, 0), stage=t % 2, barrier=full)
            sb.tma_load(B, coords=(0, 0), stage=t % 2, barrier=full)

    with mma:
        for t in lm.range(0, T):
            lm.wait(full, stage=t % 2)
            lm.mma(acc, sa[t % 2], sb[t % 2], init=True)
            lm.commit(empty, stage=t % 2)
            lm.commit(acc_full)

    with epi:
        for t in lm.range(0, T):
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(t, 0))
# CHECK: {{.*}}race_war_acc.cake:26:13: error: role mma overwrites `acc` with the MMA at line 26 before role epi has read the previous result (line 33) with T = 2 [CAKE-S003]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[t % 2], sb[t % 2], init=True)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}race_war_acc.cake:33:25: note: role epi reads `acc` here
# CHECK-NEXT: {{^}}            C.tma_store(acc.to(lm.bf16), coords=(t, 0))
# CHECK-NEXT: {{^}}                        ^~~~~~~~~~~~~~~
# CHECK-NEXT: help: wait on a barrier that role epi arrives on after reading `acc` (an empty barrier, whose first wait passes)
# CHECK-NOT: [CAKE-S0
