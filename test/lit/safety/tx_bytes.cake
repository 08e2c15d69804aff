# CAKE-S009: five 256 KiB loads complete one phase of `full`: 1310720 transaction bytes, more
# than an mbarrier's tx-count can hold. (The pool is also far beyond any target's shared
# memory; the conformance gate reports that separately.)
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def big(lm, A: LM.tma2d):
    pool = lm.smem(1310720)
    v0 = pool.view(offset=0, shape=(256, 256), dtype=lm.f32, swizzle=None)
    v1 = pool.view(offset=262144, shape=(256, 256), dtype=lm.f32, swizzle=None)
    v2 = pool.view(offset=524288, shape=(256, 256), dtype=lm.f32, swizzle=None)
    v3 = pool.view(offset=786432, shape=(256, 256), dtype=lm.f32, swizzle=None)
    v4 = pool.view(offset=1048576, shape=(256, 256), dtype=lm.f32, swizzle=None)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=5)

    with load:
        v0.tma_load(A, coords=(0, 0), barrier=full)
        v1.tma_load(A, coords=(0, 1), barrier=full)
        v2.tma_load(A, coords=(0, 2), barrier=full)
        v3.tma_load(A, coords=(0, 3), barrier=full)
        v4.tma_load(A, coords=(0, 4), barrier=full)

    with use:
        lm.wait(full)
# CHECK: {{.*}}tx_bytes.cake:18:9: error: the TMA loads completing one phase of `full` deliver 1310720 bytes, more than an mbarrier can count (1048575) [CAKE-S009]
# CHECK-NEXT: {{^}}        v0.tma_load(A, coords=(0, 0), barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}tx_bytes.cake:15:12: note: `full` is declared here with init_count=5
# CHECK-NEXT: {{^}}    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=5)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use smaller views, or spread the loads over more barriers
# CHECK-NOT: [CAKE-S0
