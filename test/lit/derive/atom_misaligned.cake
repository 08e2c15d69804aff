# RUN: not cakec verify %s 2>&1 | filecheck %s
# 256-byte rows become two 128B-swizzled column blocks; with only 4 rows a block is
# 512 B, so the second block starts off the 1024-byte grid.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(4096)
    sa = pool.view(offset=0, shape=(4, 128), dtype=lm.bf16, stage=4, swizzle=128b)
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
# CHECK: {{.*}}/atom_misaligned.cake:7:10: error: view `sa` is stored as 2 column blocks of 4 rows × 128 B, which are not 1024-byte aligned [CAKE-S054]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(4, 128), dtype=lm.bf16, stage=4, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: use a multiple of 8 rows, or a swizzle as wide as the rows
