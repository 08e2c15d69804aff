# RUN: not cakec verify %s 2>&1 | filecheck %s
# 64-byte rows cannot be stored with a 128-byte swizzle span.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(128, 32), dtype=lm.bf16, stage=4, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
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
# CHECK: {{.*}}/swizzle_span.cake:6:10: error: swizzle 128b does not fit view `sa`: its rows are 64 B, not a multiple of the 128-byte swizzle span [CAKE-S053]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 32), dtype=lm.bf16, stage=4, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: use swizzle=64b, or omit `swizzle=` to let the compiler choose
