# f32 is an accumulator type, not an MMA operand type (tf32 is).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 32), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 32), dtype=lm.f32, stage=3)
    sb = pool.view(offset=49152, shape=(128, 32), dtype=lm.f32, stage=3)
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
# CHECK: dtype_operand_f32.cake:25:13: error: `lm.mma` operand `a` (`sa`) is f32, which no MMA instruction multiplies [CAKE-D002]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: dtype_operand_f32.cake:7:10: note: `sa` is declared here as f32
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 32), dtype=lm.f32, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: dtype_operand_f32.cake:8:10: note: `sb` is declared here as f32
# CHECK-NEXT: {{^}}    sb = pool.view(offset=49152, shape=(128, 32), dtype=lm.f32, stage=3)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: MMA operands are bf16, f16, tf32, e4m3, e5m2 or i8
