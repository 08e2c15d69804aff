# CAKE-S003: releasing a stage before `lm.sum_sq` has read it lets the producer refill it
# under the read (the finding names the read and the release that fixes it).
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
# CHECK: sum_sq_refill.cake:15:13: error: role load refills sc[0] at line 15 while role math may still be reading it (`lm.sum_sq` at line 20) [CAKE-S003]
# CHECK: note: role math reads sc[0] here
# CHECK: help: before refilling, wait on a barrier that role math releases with `lm.arrive` after that read (an empty barrier)
# CHECK-NOT: error
