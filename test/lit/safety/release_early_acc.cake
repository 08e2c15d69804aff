# CAKE-S004: the MMA role signals the epilogue with a plain `lm.arrive`; the asynchronous MMA
# may still be writing the accumulator when the epilogue reads it.
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
        lm.arrive(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}release_early_acc.cake:29:9: error: `lm.arrive` at line 29 signals role epi while the MMA at line 27 may still write `acc` with K = 0 [CAKE-S004]
# CHECK-NEXT: {{^}}        lm.arrive(done)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}release_early_acc.cake:27:13: note: this MMA writes the accumulator asynchronously
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}release_early_acc.cake:33:21: note: role epi reads `acc` here
# CHECK-NEXT: {{^}}        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK-NEXT: {{^}}                    ^~~~~~~~~~~~~~~
# CHECK-NEXT: help: use `lm.commit(done, stage=...)`, which arrives only once the role's MMAs have completed
# CHECK-NOT: [CAKE-S0
