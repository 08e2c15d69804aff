# The other order (issue 17, gap 5): an sm_90a kernel first does not get a later, valid
# sm_100a kernel rejected for its Tensor Memory (it was, with CAKE-H001).
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def hopper(lm, C: LM.tma3d, Csq: LM.tensor2d):
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    c_full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sc.tma_load(C, coords=(0, 0, 0), barrier=c_full)
    with math:
        lm.wait(c_full)
        Csq.store(lm.sum_sq(sc, axis=1), coords=(0, 0))

@cake.schedule(target="sm_100a")
def blackwell(lm, Q: LM.tma3d):
    pool = lm.smem(32768)
    smem_q = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16)
    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    q_full = lm.barrier(count=1, prod=[load], cons=[mma])
    with load:
        smem_q.tma_load(Q, coords=(0, 0, 0), barrier=q_full)
    with mma:
        lm.wait(q_full)
        lm.mma(tmem_acc, smem_q, smem_q, init=True)
