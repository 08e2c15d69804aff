# CAKE-S001: a cycle. The load role waits for `go` before its first load, but the epilogue
# arrives on `go` only after it stored the result, which needs every tile.
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
    go = lm.barrier(count=1, prod=[epi], cons=[load])

    with load:
        lm.wait(go)
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
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
        lm.arrive(go)
# CHECK: {{.*}}deadlock_cycle.cake:20:9: error: deadlock: role load waits on go[0] (phase 0) at line 20 with K = 0; role epi, which completes it, is itself waiting on done[0] (phase 0) at line 34 [CAKE-S001]
# CHECK-NEXT: {{^}}        lm.wait(go)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~
# CHECK-NEXT: {{.*}}deadlock_cycle.cake:28:13: note: role mma waits here
# CHECK-NEXT: {{^}}            lm.wait(full, stage=k % 3)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}deadlock_cycle.cake:34:9: note: role epi waits here
# CHECK-NEXT: {{^}}        lm.wait(done)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}deadlock_cycle.cake:17:10: note: `go` is declared here
# CHECK-NEXT: {{^}}    go = lm.barrier(count=1, prod=[epi], cons=[load])
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: break the cycle: one of these waits must be satisfiable before its role completes what the others wait for
# CHECK-NOT: [CAKE-S0
