# RUN: not cakec verify %s 2>&1 | filecheck %s
# An unswizzled TMA destination still needs 128-byte alignment.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65600)
    sa = pool.view(offset=64, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=None)
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
# CHECK: {{.*}}/tma_dst_misaligned.cake:6:10: error: view `sa` at offset 64 is not aligned for a TMA destination, which needs a multiple of 128 bytes [CAKE-S051]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=64, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=None)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: move the view to offset 128
