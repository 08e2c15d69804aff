@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma3d, Csq: LM.tensor2d):
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[4])
    math = lm.role(warps=[4, 5, 6, 7])
    c_full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sc.tma_load(C, coords=(0, 0, 0), barrier=c_full)
    with math:
        lm.wait(c_full)
        Csq.store(lm.sum_sq(sc, axis=1), coords=(0, 0))
