# CAKE-S016: `sb` starts inside `sa`'s last stage.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
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
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}smem_overlap.cake:8:10: error: view `sb` (bytes [32768, 81920)) overlaps view `sa` (bytes [0, 49152)) in pool `pool`; both are live for the whole kernel [CAKE-S016]
# CHECK-NEXT: {{^}}    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}smem_overlap.cake:7:10: note: `sa` is declared here
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: place `sb` at offset=49152 or later, or declare it with `reuses=sa` where `sa` is dead before `sb` is first used
# CHECK-NOT: [CAKE-S0
