# FP8 MMA needs sm_89 or later; Ampere (sm_80) has neither FP8 mma.sync nor TMA.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64), lm.cdiv(N, 64))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(16384)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.e4m3, stage=2)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.e4m3, stage=2)

    load = lm.role(warps=[0])
    math = lm.role(warps=[1])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 2)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 2, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 2, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
            lm.commit(empty, stage=k % 2)
# CHECK: mma_fp8_sm80.cake:24:13: error: `tma_load` needs the Tensor Memory Accelerator (TMA), which sm_80 does not have [CAKE-H002]
# CHECK-NEXT: {{^}}            sa.tma_load(A, coords=(m_tile, k), stage=k % 2, barrier=full)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_fp8_sm80.cake:25:13: note: `tma_load` is also used here
# CHECK-NEXT: {{^}}            sb.tma_load(B, coords=(n_tile, k), stage=k % 2, barrier=full)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: target sm_90a, sm_100a, sm_103a, sm_120a or sm_121a
# CHECK: mma_fp8_sm80.cake:30:13: error: sm_80 has no MMA instruction for e4m3 operands accumulating into f32 in registers [CAKE-H003]
# CHECK-NEXT: {{^}}            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_fp8_sm80.cake:11:10: note: `sa` holds e4m3
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.e4m3, stage=2)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: mma_fp8_sm80.cake:12:10: note: `sb` holds e4m3
# CHECK-NEXT: {{^}}    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.e4m3, stage=2)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: target sm_89, sm_90a, sm_100a, sm_103a, sm_120a or sm_121a
