# Near miss for the indentation and bracket errors: comments at any indentation, blank
# lines holding spaces, a tab-indented block, a backslash continuation, brackets spanning
# lines, a multi-level dedent, and brackets nested exactly 64 deep (the limit).
# RUN: cakec verify %s
@cake.schedule()
def layout_ok(lm, Q: LM.tma3d):
# a comment at column 1 inside the body
    pool = lm.smem(98304)
    smem_q = pool.view(
        offset=0,
            shape=(128, 128),   # inside brackets, indentation is free
      dtype=lm.bf16, stage=3,
    )
    stages = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((3))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    q_full = lm.barrier(count=stages, prod=[load], \
                        cons=[mma], init_count=1)
    
    with load:
		for stage in lm.range(0, stages):
			smem_q.tma_load(Q, coords=(0, 0, stage), stage=stage, barrier=q_full)
    with mma:
        for stage in lm.range(0, stages):
            lm.wait(q_full, stage=stage)
                # a comment deeper than its block
            lm.fence_proxy()
            lm.mma(tmem_acc, smem_q[stage], smem_q[stage], init=(stage == 0))
