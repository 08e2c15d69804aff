# C = A · Bᵀ with one wgmma.m64n64k8.f32.tf32.tf32 per K step: A [M, K], B [N, K] tf32, C [M, N] f32.
# A small one-warpgroup GEMM (no ring reuse tricks) that exercises this MMA form on the GPU
# (test/gpu/test_mma_forms_gpu.py). Tiles of 64 × 64, K in steps of 32; tails handled by
# TMA zero fill and bounds-checked stores.
@cake.schedule(target="sm_90a")
def mma_wgmma_tf32(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 64), lm.cdiv(N, 64))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 32), 1)

    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(64, 32), dtype=lm.tf32, stage=2, swizzle=128b)
    sb = pool.view(offset=16384, shape=(64, 32), dtype=lm.tf32, stage=2, swizzle=128b)

    math = lm.role(warps=[0, 1, 2, 3])
    load = lm.role(warps=[4])
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
        C.tma_store(acc, coords=(m_tile, n_tile))
