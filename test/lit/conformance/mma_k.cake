# bf16 MMAs step K by 16 elements: K=24 cannot be reduced. (The 48-byte rows
# also fit no swizzle, which the data gate reports.)
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 24), 1)
    pool = lm.smem(36864)
    sa = pool.view(offset=0, shape=(128, 24), dtype=lm.bf16, stage=3)
    sb = pool.view(offset=18432, shape=(128, 24), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
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
# CHECK: mma_k.cake:26:13: error: `lm.mma` reduces over K=24, which is not a multiple of the 16-element K step of tcgen05.mma on sm_100a for bf16 [CAKE-H004]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_k.cake:10:11: note: `acc` is declared here with shape (128, 128)
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: make K a multiple of 16
# CHECK: mma_k.cake:8:10: error: no swizzle span divides the 48-byte rows of view `sa`, so TMA writes them unswizzled, but tcgen05.mma reads an unswizzled K-major operand only as 16-byte core-matrix rows [CAKE-D008]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 24), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_k.cake:26:13: note: tcgen05.mma reads `sa` here
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: omit `swizzle=` (the compiler picks the widest span that divides the rows) or choose one such as `swizzle=128b`; rows must be a multiple of 32 bytes
# CHECK: mma_k.cake:9:10: error: no swizzle span divides the 48-byte rows of view `sb`, so TMA writes them unswizzled, but tcgen05.mma reads an unswizzled K-major operand only as 16-byte core-matrix rows [CAKE-D008]
# CHECK-NEXT: {{^}}    sb = pool.view(offset=18432, shape=(128, 24), dtype=lm.bf16, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_k.cake:26:13: note: tcgen05.mma reads `sb` here
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: omit `swizzle=` (the compiler picks the widest span that divides the rows) or choose one such as `swizzle=128b`; rows must be a multiple of 32 bytes
