# Near miss for every syntax error here: each statement and expression form the grammar
# accepts (docs/language.md), in a kernel that verifies.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def all_forms(lm, Q: LM.tma3d, n: LM.i32,):   # trailing comma in the parameters
    pool = lm.smem(98304)
    smem_q = pool.view(offset=0, shape=(128, 128,), dtype=lm.bf16, stage=3,
                       swizzle=128b)                # a call continued inside brackets
    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load, mma = lm.role(warps=[0]), lm.role(warps=[1])    # tuple assignment
    pipe = lm.pipeline(stages=3)
    q_full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=1, \
                        pipeline=pipe)
    tiles = lm.cdiv(n, 128) * 2 ** 1 + -1 + (n % 4) // 2 - +0
    last = tiles - 1 if tiles > 1 else 0
    big = not (tiles == 0) and tiles != 1 or tiles >= 2
    flag = True and not False
    with load:
        for stage in lm.range(3):
            smem_q.tma_load(Q, coords=(0, 0, stage), stage=stage, barrier=q_full)
    with mma:
        for stage in lm.range(0, 3, 1):
            lm.wait(q_full, stage=stage)
            if stage == 0:
                lm.fence_proxy()
            elif stage < last:
                pass
            else:
                pass
            lm.mma(tmem_acc, smem_q[stage], smem_q[stage], init=(stage == 0))
