# Decode split-K, swap-AB, 256-deep K stages: gemm_bf16_splitk_swap.cake's schedule (Cᵀ = B · Aᵀ,
# A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation, bf16 out; any M, N, K ≥ 1 with
# K % 8 == 0; correct for any M, fast below 17) with each ring stage four 64-deep boxes of
# K side by side instead of one.
#
# A 64-row box of B with 128-byte swizzle reads 128 contiguous bytes of each weight row, so
# the 64-deep schedule asks DRAM for 64 rows × 128 B per stage, each row's next 128 B one
# stage (~0.3 µs) later. Here one stage asks for 512 contiguous bytes of each of its 64 rows
# at once (four boxes issued back to back), a quarter of the barrier round trips per byte
# too: 5 stages × (32 KiB of B + 8 KiB of A) = 160 KiB of B in flight per SM (18 × 8 KiB in
# the 64-deep kernel). The route's split chooser counts 64-deep stages; the kernel cuts its
# own cdiv(K, 256) stages into min(S, stages) parts. Measured against the 64-deep kernel in
# two `cakec tune gemm` runs on the H200 (2026-12-04): equal within 2 % at one M tile and
# N <= 8192, 4-5 % faster at 7×11008×4096 (31.1 / 32.7 µs) and 16×28672×4096 (63.9 / 67.0),
# and far faster with several M tiles (64×4096×14336: 45.8 / 67.9; 64×5120×5120: 28.7 / 40.7).
#
# Split-K as in gemm_bf16_splitk_swap.cake: W [S, M, N] f32 and L [cdiv(M, 16) · cdiv(N, 64)]
# i32 from the caller, the last CTA of a tile adds the parts in order.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_swap_k256(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                               L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 16)
    tiles_n = lm.cdiv(N, 64)
    k_tiles = lm.max(lm.cdiv(K, 256), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # 256-deep K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(204800)                       # 5 stages × 4 × (8 KiB of B + 2 KiB of A)
    sb0 = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb1 = pool.view(offset=40960, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb2 = pool.view(offset=81920, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sb3 = pool.view(offset=122880, shape=(64, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa0 = pool.view(offset=163840, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa1 = pool.view(offset=174080, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa2 = pool.view(offset=184320, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)
    sa3 = pool.view(offset=194560, shape=(16, 64), dtype=lm.bf16, stage=5, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
    pipe = lm.pipeline(stages=5)
    full = lm.barrier(count=5, prod=[load], cons=[math], init_count=8, pipeline=pipe)
    empty = lm.barrier(count=5, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(64, 16), dtype=lm.f32, role=math)   # a tile of Cᵀ

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 5
                q = (part * per + k) * 4             # the first 64-deep box of this stage
                lm.wait(empty, stage=s)
                sb0.tma_load(B, coords=(n_tile, q), stage=s, barrier=full)
                sb1.tma_load(B, coords=(n_tile, q + 1), stage=s, barrier=full)
                sb2.tma_load(B, coords=(n_tile, q + 2), stage=s, barrier=full)
                sb3.tma_load(B, coords=(n_tile, q + 3), stage=s, barrier=full)
                sa0.tma_load(A, coords=(m_tile, q), stage=s, barrier=full)
                sa1.tma_load(A, coords=(m_tile, q + 1), stage=s, barrier=full)
                sa2.tma_load(A, coords=(m_tile, q + 2), stage=s, barrier=full)
                sa3.tma_load(A, coords=(m_tile, q + 3), stage=s, barrier=full)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 5
                lm.wait(full, stage=s)
                lm.mma(acc, sb0[s], sa0[s], init=(k == 0))
                lm.mma(acc, sb1[s], sa1[s])
                lm.mma(acc, sb2[s], sa2[s])
                lm.mma(acc, sb3[s], sa3[s])
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part, parts=parts, workspace=W,
                          counters=L, dtype=lm.bf16, transpose=True)
