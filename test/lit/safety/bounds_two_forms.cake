# CAKE-S018 from two forms of the K-tile count that are not equal: the epilogue counts
# lm.max(K // 64, 1) tiles, the MMA role lm.max((K + 63) // 64, 1). They agree when K is a
# multiple of 64; the witness is a launch where they do not (K = 65: the MMA role announces
# two results, the epilogue waits for one).
# bounds_two_forms_ok.cake is the near miss.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
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
    free = lm.barrier(count=1, prod=[epi], cons=[mma])

    with load:
        for k in lm.range(0, lm.max(lm.cdiv(K, 64), 1)):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, lm.max((K + 63) // 64, 1)):
            lm.wait(full, stage=k % 3)
            lm.wait(free)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=True)
            lm.commit(empty, stage=k % 3)
            lm.commit(done)

    with epi:
        for k in lm.range(0, lm.max(K // 64, 1)):
            lm.wait(done)
            C.tma_store(acc.to(lm.bf16), coords=(0, k))
            lm.arrive(free)
# CHECK: {{.*}}bounds_two_forms.cake:33:13: error: `lm.commit` at line 33 completes phase 1 of done[0], which role epi never waits for with K = 65 [CAKE-S018]
# CHECK-NEXT: {{^}}            lm.commit(done)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}bounds_two_forms.cake:18:12: note: `done` is declared here
# CHECK-NEXT: {{^}}    done = lm.barrier(count=1, prod=[mma], cons=[epi])
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: make role epi wait for every phase of `done` (compare the trip counts of the two roles)
