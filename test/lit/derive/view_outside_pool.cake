# RUN: not cakec verify %s 2>&1 | filecheck %s
# RUN: not cakec inspect %s 2>&1 | filecheck %s
# Three 16 KiB stages do not fit in a 32 KiB pool.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=1)
    with load:
        for s in lm.range(0, 3):
            sa.tma_load(A, coords=(0, s), stage=s, barrier=full)
    with mma:
        for s in lm.range(0, 3):
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sa[s], init=(s == 0))
# CHECK: {{.*}}/view_outside_pool.cake:7:10: error: view `sa` does not fit in pool `pool`: 3 stages of 16384 B from offset 0 end at byte 49152, but the pool has 32768 B [CAKE-S050]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}/view_outside_pool.cake:6:12: note: `pool` is declared here with 32768 bytes
# CHECK-NEXT: {{^}}    pool = lm.smem(32768)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: enlarge the pool to at least 49152 bytes, or move or shrink the view
