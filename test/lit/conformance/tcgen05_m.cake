# tcgen05.mma takes M=64 or M=128 per CTA (TMEM has 128 lanes per CTA).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(61440)
    sa = pool.view(offset=0, shape=(96, 64), dtype=lm.bf16, stage=3)
    sb = pool.view(offset=36864, shape=(64, 64), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=64, shape=(96, 64), dtype=lm.f32)
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
# CHECK: tcgen05_m.cake:25:13: error: tcgen05.mma on sm_100a takes M = 64 or 128 per CTA, and accumulator `acc` has M=96 [CAKE-H004]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tcgen05_m.cake:9:11: note: `acc` is declared here with shape (96, 64)
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=0, width=64, shape=(96, 64), dtype=lm.f32)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use an accumulator of 64 or 128 rows
