# `lm.sum_sq` reads its stage synchronously: an `lm.arrive` after the read releases the stage
# for the next TMA load (sum_sq_refill.cake with the arrive moved after the read).
# RUN: cakec verify %s
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
            Csq.store(lm.sum_sq(sc, axis=1), coords=(0, t))
            lm.arrive(empty)
