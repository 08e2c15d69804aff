# A kernel whose CTAs copy into each other's SMEM and arrive on each other's barriers must
# end with `lm.cluster_sync()` (S046); the near miss is multicast_ok.cake.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def k(lm, C: LM.tma3d, O: LM.tensor2d):
    lm.grid(4)
    pool = lm.smem(65536)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    with load:
        for kt in lm.range(0, 8):
            lm.wait(empty, stage=kt % 2)
            sc.tma_load(C, coords=(0, kt, 0), stage=kt % 2, barrier=full, multicast=0)
    with math:
        for kt in lm.range(0, 8):
            lm.wait(full, stage=kt % 2)
            lm.arrive(empty, stage=kt % 2, multicast=0)
# CHECK: no_exit_sync.cake:17:13: error: this copies into the SMEM of other blocks of the cluster, but the kernel does not end with `lm.cluster_sync()`: a block may exit while a peer still writes into its shared memory or arrives on its barriers [CAKE-S046]
# CHECK-NEXT: {{^}}            sc.tma_load(C, coords=(0, kt, 0), stage=kt % 2, barrier=full, multicast=0)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: {{^}}help: add `lm.cluster_sync()` as the kernel's last statement, after its role blocks
# CHECK-NOT: error
