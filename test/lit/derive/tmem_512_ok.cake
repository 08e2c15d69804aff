# RUN: cakec verify %s
# RUN: cakec inspect %s | filecheck %s
# Near miss of tmem_over_512.cake: columns [384, 512) end exactly at the limit.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4)
    acc = lm.tmem(cols=384, width=128, shape=(128, 128), dtype=lm.f32)
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
# CHECK:      "tmem": {
# CHECK-NEXT:   "allocated_columns": 512,
# CHECK-NEXT:   "alloc_warp": 1,
# CHECK-NEXT:   "regions": [
# CHECK-NEXT:     {"name": "acc", "col": 384, "width": 128}
# CHECK-NEXT:   ]
