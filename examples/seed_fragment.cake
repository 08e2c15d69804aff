@cake.schedule()
def seed_fragment(lm, Q: LM.tma3d, O: LM.tma2d, seqlen_q: LM.i32):
    # 1. Declarative resource allocation
    pool = lm.smem(98304)                                   # 96 KB shared memory
    smem_q = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=3)
    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    # 2. Warp-role allocation and pipelining
    load = lm.role(warps=[0])       # warp group 0: data movement
    mma  = lm.role(warps=[1])       # warp group 1: tensor-core math
    pipe = lm.pipeline(stages=3)    # 3-stage software pipeline

    # 3. Explicit synchronization barrier
    q_full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=1, pipeline=pipe)

    # 4. Asynchronous execution loops
    with load:
        for stage in lm.range(0, 3):
            smem_q.tma_load(Q, coords=(0, 0, stage), stage=stage, barrier=q_full)

    with mma:
        for stage in lm.range(0, 3):
            lm.wait(q_full, stage=stage)   # block until load warp finishes this stage
            lm.fence_proxy()               # guarantee on-chip visibility
            lm.mma(tmem_acc, smem_q[stage], smem_q[stage], init=(stage == 0))
