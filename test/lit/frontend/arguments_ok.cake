# Near miss for CAKE-T005..T010 and T013: positional arguments in declaration order,
# optional arguments left to their defaults, constant expressions folded where constants
# are required, runtime scalars where runtime values are allowed.
# RUN: cakec verify %s
@cake.schedule()
def arguments_ok(lm, Q: LM.tma3d, n: LM.i32):
    lm.grid(lm.cdiv(n, 128), 1)
    pool = lm.smem(3 * 2 ** 15)
    smem_q = pool.view(0, (128, 128), lm.bf16, 3, 128b)
    tmem_acc = lm.tmem(0, 128, (128, 128), lm.f32)
    load = lm.role([0])
    mma = lm.role(warps=[1])
    q_full = lm.barrier(3, [load], [mma])
    tile = lm.block_id(0)
    with load:
        for stage in lm.range(0, lm.min(n, 3)):
            smem_q.tma_load(Q, (tile, 0, stage), stage, q_full)
    with mma:
        for stage in lm.range(lm.min(n, 3)):
            lm.wait(q_full, stage)
            lm.fence_proxy()
            lm.mma(tmem_acc, smem_q[stage], smem_q[stage], stage == 0)
