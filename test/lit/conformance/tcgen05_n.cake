# tcgen05.mma with M=128 takes N in steps of 16: N=72 is not one of them.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(76800)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3)
    sb = pool.view(offset=49152, shape=(72, 64), dtype=lm.bf16, stage=3)
    acc = lm.tmem(cols=0, width=72, shape=(128, 72), dtype=lm.f32)
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
# CHECK: tcgen05_n.cake:25:13: error: tcgen05.mma on sm_100a takes N = 16..256 in steps of 16 with M=128, and accumulator `acc` has N=72 [CAKE-H004]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tcgen05_n.cake:9:11: note: `acc` is declared here with shape (128, 72)
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=0, width=72, shape=(128, 72), dtype=lm.f32)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: with M=128, pick an N from that set
