# RUN: not cakec verify %s 2>&1 | filecheck %s
# Columns [448, 576) run past the 512 columns of tensor memory.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4)
    acc = lm.tmem(cols=448, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=1)
    empty = lm.barrier(count=4, prod=[mma], cons=[load], init_count=1)
    with load:
        for k in lm.range(0, 8):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(0, k), stage=k % 4, barrier=full)
    with mma:
        for k in lm.range(0, 8):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sa[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)
# CHECK: {{.*}}/tmem_over_512.cake:7:11: error: TMEM demand of 576 columns exceeds the 512 columns of tensor memory: region `acc` uses columns [448, 576) [CAKE-H050]
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=448, width=128, shape=(128, 128), dtype=lm.f32)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: keep every region within columns [0, 512): reduce `width` or reuse columns of a region that is no longer live
