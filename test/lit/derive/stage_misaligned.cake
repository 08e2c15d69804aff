# RUN: not cakec verify %s 2>&1 | filecheck %s
# 512-byte stages put every other stage off the 1024-byte grid 128b needs.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(2048)
    sa = pool.view(offset=0, shape=(4, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    acc = lm.tmem(cols=0, width=32, shape=(128, 4), dtype=lm.f32)
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
# CHECK: {{.*}}/stage_misaligned.cake:6:10: error: the stages of view `sa` are 512 B apart, not a multiple of the 1024 bytes its 128b swizzle needs [CAKE-S052]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(4, 64), dtype=lm.bf16, stage=4, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: make one stage a multiple of 1024 bytes or use a narrower swizzle
