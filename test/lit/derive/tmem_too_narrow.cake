# RUN: not cakec verify %s 2>&1 | filecheck %s
# A 128x128 f32 accumulator needs 128 TMEM columns.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4)
    acc = lm.tmem(cols=0, width=64, shape=(128, 128), dtype=lm.f32)
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
# CHECK: {{.*}}/tmem_too_narrow.cake:7:11: error: TMEM region `acc` holds 128×128 f32, which needs 128 columns, but its width is 64 [CAKE-H051]
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=0, width=64, shape=(128, 128), dtype=lm.f32)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: declare it with `width=128`
