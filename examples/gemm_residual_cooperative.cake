# C = A · Bᵀ + α · R on Hopper, the cooperative schedule with R read from global memory: A [M, K],
# B [N, K] bf16, R [M, N] bf16 (the residual stream), α a runtime f32 scale, C [M, N] bf16; f32
# accumulation and epilogue. Any M, N, K ≥ 1 with K % 8 == 0 (R's and C's rows may have any
# pitch): tails are handled by TMA's zero fill on loads and by bounds-checked loads and stores.
#
# The schedule is examples/gemm_bf16.cake's (persistent 128×256 tiles in groups of 8 M-tiles,
# a TMA producer warpgroup, two consumer warpgroups, a 4-stage 128-byte-swizzled ring); only
# the epilogue differs: the residual tile is an (M, N) `R.load` consumed by the store, so it
# is not held in registers: each element is read from global memory (bf16, bounds-checked)
# where the store evaluates acc + α·r (one FMA), converted to bf16 and stored. Both warpgroups
# run that epilogue after the tile's last MMA with the tensor cores idle, and each pair's loads
# wait for the previous pair's store (R and C may alias): 0.79–0.84× torch.addmm on the H200.
# examples/gemm_residual.cake (R by TMA into SMEM, ping-pong) is the fast schedule for C rows
# of 16-byte pitch; this one serves any pitch.
@cake.schedule(target="sm_90a")
def gemm_residual_cooperative(lm, A: LM.tma2d, B: LM.tma2d, R: LM.tensor2d, C: LM.tma2d,
                              alpha: LM.f32, M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 256)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 64), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(196608)                       # 4 stages × (16 KiB of A + 32 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(256, 64), dtype=lm.bf16, stage=4, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with math:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            group = t // (8 * tiles_n)
            rows = lm.min(tiles_m - group * 8, 8)
            m_tile = group * 8 + (t - group * 8 * tiles_n) % rows
            n_tile = (t - group * 8 * tiles_n) // rows
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            r = R.load(coords=(m_tile, n_tile), shape=(128, 256), dtype=lm.bf16)
            C.tma_store((acc + alpha * r.to(lm.f32)).to(lm.bf16), coords=(m_tile, n_tile))
