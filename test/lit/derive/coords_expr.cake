# RUN: cakec opt %s --pass-pipeline derive | filecheck %s
# Element coordinates are the author's tile coordinates times the tile extent, printed
# innermost first in .cake names; constants fold, compound expressions keep parentheses.
@cake.schedule()
def k(lm, A: LM.tma3d, n: LM.i32):
    m_tile = lm.block_id(0)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(2, 64, 64), dtype=lm.bf16, stage=4)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=1)
    with load:
        for k in lm.range(0, lm.cdiv(n, 64)):
            sa.tma_load(A, coords=(m_tile + 1, k // 2, 3), stage=k % 4, barrier=full)
    with mma:
        for k in lm.range(0, lm.cdiv(n, 64)):
            lm.wait(full, stage=k % 4)
# CHECK: cake.box = array<i64: 2, 64, 64>, cake.copies = 1 : i64, cake.copy_step = 0 : i64, cake.tx_bytes = 16384 : i64, cake.coords = ["192", "k//2*64", "(m_tile+1)*2"]
