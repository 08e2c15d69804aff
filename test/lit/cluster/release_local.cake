# A stage filled by a multicast copy must be released to every CTA of the group: a local
# `lm.arrive` lets the peer's copy overwrite it while this CTA still reads it (S045); the
# near miss is multicast_ok.cake.
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
            lm.arrive(empty, stage=kt % 2)
    lm.cluster_sync()
# CHECK: release_local.cake:22:13: error: this releases a stage of `empty` in this block only, but `sc` is filled by a copy multicast to every block along x (line 18) once `empty` says the stage is free: a peer may overwrite the stage while this block still reads it [CAKE-S045]
# CHECK-NEXT: {{^}}            lm.arrive(empty, stage=kt % 2)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: release_local.cake:18:13: note: the multicast copy
# CHECK-NEXT: {{^}}            sc.tma_load(C, coords=(0, kt, 0), stage=kt % 2, barrier=full, multicast=0)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: release_local.cake:17:13: note: the wait it follows
# CHECK-NEXT: {{^}}            lm.wait(empty, stage=kt % 2)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: {{^}}help: release it to every member: `lm.arrive(empty, stage=..., multicast=0)`
# CHECK-NOT: error
