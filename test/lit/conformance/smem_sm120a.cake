# A four-stage Hopper pipeline (192 KiB) does not fit consumer Blackwell's 99 KiB.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_120a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(131072)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 4, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 4, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sb[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)
# CHECK: smem_sm120a.cake:10:12: error: this kernel needs 133168 bytes of shared memory per block (132080 for pools and their alignment, 64 for mbarriers, 1024 reserved by the system), more than the 101376 bytes sm_120a allows [CAKE-H009]
# CHECK-NEXT: {{^}}    pool = lm.smem(131072)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~
# CHECK-NEXT: smem_sm120a.cake:11:10: note: view `sa` takes 4 × 16384 bytes
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: shrink the pool (fewer stages or smaller tiles) by at least 31792 bytes
