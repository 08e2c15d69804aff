# Each kernel of a file is checked against its own target (issue 17, gap 5): an sm_100a
# kernel first does not let a later sm_90a kernel use Tensor Memory.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
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

@cake.schedule(target="sm_90a")
def hopper(lm, Q: LM.tma3d):
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
# CHECK: two_kernels_targets.cake:22:16: error: `lm.tmem` needs Tensor Memory, which sm_90a does not have [CAKE-H001]
# CHECK-NOT: error
