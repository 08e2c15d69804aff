# Operands are K-major: `b` stored [K, N] is the transposed layout.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(147456)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
    sb = pool.view(offset=49152, shape=(64, 256), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=256, shape=(128, 256), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[mma], cons=[load], init_count=1, pipeline=pipe)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with mma:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
# CHECK: kmajor.cake:25:13: error: `b` (`sb`) is (64, 256) = [K, N], but `lm.mma` reads operands K-major: `b` must be [N, K] = (256, 64) [CAKE-D005]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: kmajor.cake:8:10: note: `sb` is declared here
# CHECK-NEXT: {{^}}    sb = pool.view(offset=49152, shape=(64, 256), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: read it transposed, `sb[s].T` (MN-major: 16-bit operands of wgmma and tcgen05.mma), or store it with K as its inner dimension, shape (256, 64)
