# Near miss for CAKE-T001/T002: names local to one block may be reused in a sibling block,
# loop variables may repeat across loops, and tuple assignment binds several names.
# RUN: cakec verify %s
@cake.schedule()
def names_ok(lm, Q: LM.tma3d, seqlen: LM.i32):
    pool = lm.smem(98304)
    smem_q = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=3)
    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load, mma = lm.role(warps=[0]), lm.role(warps=[1])
    pipe = lm.pipeline(stages=3)
    q_full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=1, pipeline=pipe)
    with load:
        for stage in lm.range(0, 3):
            row = stage * 0
            smem_q.tma_load(Q, coords=(row, 0, stage), stage=stage, barrier=q_full)
    with mma:
        for stage in lm.range(0, 3):
            row = stage
            lm.wait(q_full, stage=row)
            lm.fence_proxy()
            lm.mma(tmem_acc, smem_q[row], smem_q[row], init=(row == 0))
