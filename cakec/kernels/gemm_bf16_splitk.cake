# C = A · Bᵀ split along K (split-K) on Hopper: A [M, K], B [N, K], C [M, N], bf16 in, f32
# accumulation, bf16 out; any M, N, K ≥ 1 with K % 8 == 0 (TMA's 16-byte rows), like
# gemm_bf16.cake. For shapes whose 128×128 tiles are too few to fill the 132 SMs (M = 128 or
# 256 against N = 4096: 32 or 64 tiles), each tile's K range is cut into `parts` pieces run by
# different CTAs, so tiles × parts work units fill the machine.
#
# * W [S, M, N] f32 (the partial sums) and L [tiles] i32 (one arrival counter per tile, zero
#   at launch) come from the caller: cakec.kernels.gemm's split-K route keeps both per
#   device and stream (docs/kernels.md); `C.split_store` leaves every counter at zero again.
# * parts = min(S, K tiles), each part `per` = cdiv(K tiles, parts) stages deep: the last
#   part's stages past K read TMA's zero fill, which adds nothing. Units run tile-major
#   (the parts of one tile side by side), so the last CTA of a tile reads partials that
#   were just written and are still in L2.
# * The sum is deterministic: the last CTA to arrive adds W[0], W[1], ... in part order.
# * Otherwise gemm_bf16_128x128.cake's schedule: persistent CTAs, a 6-stage ring of 32 KiB
#   stages continuing across units, one producer warpgroup, two consumer warpgroups.
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                     L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 128)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(196608)                       # 6 stages × (16 KiB of A + 16 KiB of B)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)
    sb = pool.view(offset=98304, shape=(128, 64), dtype=lm.bf16, stage=6, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=6)
    full = lm.barrier(count=6, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=6, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                # The ring continues across units: this CTA's k-th stage of its j-th unit.
                s = ((u // lm.num_blocks(0)) * per + k) % 6
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=full)

    with math:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 6
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            C.split_store(acc, coords=(m_tile, n_tile), part=part, parts=parts, workspace=W,
                          counters=L, dtype=lm.bf16)
