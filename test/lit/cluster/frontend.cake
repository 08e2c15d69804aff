# The cluster vocabulary's frontend errors: `multicast=`, `lm.cluster_rank()` and
# `lm.cluster_sync()` need a cluster (T010), multicast axes must be axes of the cluster with
# more than one CTA (T010), `cluster=` takes 1 to 3 positive literals (T007), and
# `lm.cluster_sync()` ends the kernel, after its role blocks (T011).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def no_cluster(lm):
    r = lm.cluster_rank()

@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def wrong_axis(lm, C: LM.tma2d):
    lm.grid(2)
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    full = lm.barrier(count=1, prod=[load], cons=[load])
    with load:
        sc.tma_load(C, coords=(0, 0), barrier=full, multicast=1)

@cake.schedule(target="sm_90a", cluster=(2, 0))
def zero(lm):
    lm.grid(2)

@cake.schedule(target="sm_90a", cluster=2)
def early_sync(lm):
    lm.grid(2)
    load = lm.role(warps=[0])
    lm.cluster_sync()
    with load:
        pass
# CHECK: frontend.cake:8:9: error: `lm.cluster_rank()` needs a thread-block cluster, and this kernel declares none [CAKE-T010]
# CHECK-NEXT: {{^}}    r = lm.cluster_rank()
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: {{^}}help: declare one with `@cake.schedule(..., cluster=(2, 1, 1))`
# CHECK: frontend.cake:18:63: error: `multicast` axis 1 is not an axis of the cluster (2, 1, 1) with more than one block [CAKE-T010]
# CHECK-NEXT: {{^}}        sc.tma_load(C, coords=(0, 0), barrier=full, multicast=1)
# CHECK-NEXT: {{^}}                                                              ^
# CHECK-NEXT: {{^}}help: name the axes along which the blocks share the data, e.g. `multicast=0` for the blocks along x
# CHECK: frontend.cake:20:41: error: `cluster` must be 1 to 3 positive integer literals such as (2, 1, 1) [CAKE-T007]
# CHECK-NEXT: {{^}}@cake.schedule(target="sm_90a", cluster=(2, 0))
# CHECK-NEXT: {{^}}                                        ^~~~~~{{$}}
# CHECK-NEXT: {{^}}help: the blocks of a thread-block cluster along x, y and z
# CHECK: frontend.cake:28:5: error: `lm.cluster_sync()` is the kernel's exit rendezvous: write it once, after the last role block, but a role block follows it [CAKE-T011]
# CHECK-NEXT: {{^}}    lm.cluster_sync()
# CHECK-NEXT: {{^}}    ^~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: frontend.cake:29:5: note: this comes after it
# CHECK-NEXT: {{^}}    with load:
# CHECK-NEXT: {{^}}    ^~~~{{$}}
# CHECK-NEXT: {{^}}help: move `lm.cluster_sync()` to the end of the kernel
# CHECK-NOT: error
