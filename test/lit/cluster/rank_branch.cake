# Multicast copies and arrivals must run alike in every CTA of the group: under a branch on
# `lm.cluster_rank()` the members would issue different sequences (S047).
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
            if lm.cluster_rank() == 0:
                lm.arrive(empty, stage=kt % 2, multicast=0)
    lm.cluster_sync()
# CHECK: rank_branch.cake:22:17: error: this multicast copy or arrival runs under a branch or loop that depends on `lm.cluster_rank()`: the blocks of its group would not issue the same sequence, and their barriers would disagree [CAKE-S047]
# CHECK-NEXT: {{^}}                lm.arrive(empty, stage=kt % 2, multicast=0)
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: rank_branch.cake:21:13: note: the rank-dependent branch or loop
# CHECK-NEXT: {{^}}            if lm.cluster_rank() == 0:
# CHECK-NEXT: {{^}}            ^~{{$}}
# CHECK-NEXT: {{^}}help: keep multicast copies and arrivals on paths every member of the group takes alike; use the rank in coordinates, not in control flow
# CHECK-NOT: error
