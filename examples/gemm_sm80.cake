# C = A · Bᵀ on Ampere and later without TMA (sm_80, sm_89; also sm_120a/121a): A [M, K],
# B [N, K], C [M, N], bf16 in, f32 accumulation in registers, bf16 out. Any M, N, K ≥ 1 with
# K % 8 == 0 (16-byte rows for cp.async); tails are zero-filled on load and bounds-checked on
# store.
#
# Schedule: one CTA per 128×128 output tile.
# * a load warpgroup: all 128 threads copy 16-byte chunks of the next 32-deep K slice of A and
#   B into a 4-stage ring (cp.async, swizzled), each thread arriving on `full` when its own
#   copies have landed;
# * a math warpgroup: each warp owns a 64×64 quarter of the tile and, per stage, reads its
#   fragments with ldmatrix and issues 2 × 4 × 8 mma.sync m16n8k16, then hands the stage back
#   (`empty`).
@cake.schedule(target="sm_80")
def gemm_sm80(lm, A: LM.tensor2d, B: LM.tensor2d, C: LM.tensor2d, M: LM.i32, N: LM.i32,
              K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    k_tiles = lm.max(lm.cdiv(K, 32), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(tiles_m * lm.cdiv(N, 128))

    pool = lm.smem(65536)                        # 4 stages × (8 KiB of A + 8 KiB of B)
    sa = pool.view(offset=0, shape=(128, 32), dtype=lm.bf16, stage=4)
    sb = pool.view(offset=32768, shape=(128, 32), dtype=lm.bf16, stage=4)

    math = lm.role(warps=[0, 1, 2, 3])
    load = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)

    with load:
        m_tile = lm.block_id(0) % tiles_m
        n_tile = lm.block_id(0) // tiles_m
        for k in lm.range(0, k_tiles):
            s = k % 4
            lm.wait(empty, stage=s)
            sa.copy_load(A, coords=(m_tile, k), stage=s, barrier=full)
            sb.copy_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        m_tile = lm.block_id(0) % tiles_m
        n_tile = lm.block_id(0) // tiles_m
        for k in lm.range(0, k_tiles):
            s = k % 4
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(k == 0))
            lm.commit(empty, stage=s)
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
