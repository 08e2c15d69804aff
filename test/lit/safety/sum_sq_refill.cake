# CAKE-S026 (was reported as the CAKE-S003 refill it causes): releasing a stage before
# `lm.sum_sq` has read it lets the producer refill it under the read. The first wrong event is
# the release, so the error is there; the refill is its note (sum_sq_refill_ok.cake is the near
# miss, the release after the read).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma3d, Csq: LM.tensor2d):
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    with load:
        for t in lm.range(0, 4):
            lm.wait(empty)
            sc.tma_load(C, coords=(0, t, 0), barrier=full)
    with math:
        for t in lm.range(0, 4):
            lm.wait(full)
            lm.arrive(empty)
            Csq.store(lm.sum_sq(sc, axis=1), coords=(0, t))
# CHECK: sum_sq_refill.cake:21:13: error: `lm.arrive` at line 21 releases empty[0] before role math reads sc[0] (line 22), which role load overwrites once it passes its wait on `empty` [CAKE-S026]
# CHECK-NEXT: {{^}}            lm.arrive(empty)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~
# CHECK-NEXT: sum_sq_refill.cake:22:23: note: role math reads sc[0] here
# CHECK-NEXT: {{^}}            Csq.store(lm.sum_sq(sc, axis=1), coords=(0, t))
# CHECK-NEXT: {{^}}                      ^~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: sum_sq_refill.cake:16:13: note: role load waits on `empty` here
# CHECK: sum_sq_refill.cake:17:13: note: and then writes sc[0] here
# CHECK: sum_sq_refill.cake:17:13: note: this causes: role load refills sc[0] at line 17 while role math may still be reading it (`lm.sum_sq` at line 22) [CAKE-S003]
# CHECK: help: move the `lm.arrive` after the read of sc[0]
# CHECK-NOT: error
