# Decode split-K, swap-AB, ping-pong: gemm_bf16_splitk_swap.cake's tiles and ring (Cᵀ = B · Aᵀ,
# A [M, K], B [N, K], C [M, N], bf16 in, f32 accumulation, bf16 out; any M, N, K ≥ 1 with
# K % 8 == 0; correct for any M, fast below 17) with two consumer warpgroups taking this
# CTA's units in turn, for splits of more units than one wave of SMs holds.
#
# Measured on the H200 (2026-12-04, `cakec tune gemm`): with one consumer warpgroup, a CTA
# that runs several units stalls the weight stream at every unit's end by ~6-12 µs — its
# `split_store` (partials out, two gpu-scope fences, the arrival, and for the last CTA the S
# parts read back) runs on the warpgroup that issues the MMAs, while DRAM is saturated by
# the other SMs' loads (1×5120×5120 in 8 parts: 52.7 µs against 22.9 in one; 64×8192×28672
# in 9 parts: 707 against 263). Here math0 takes the CTA's units 0, 2, 4, ... and math1
# units 1, 3, 5, ...: one's split_store runs under the other's MMAs. The turn barriers hand
# the ring over in unit order (as in gemm_bias_gelu.cake). Measured (same day): it recovers
# part of the loss, not all (1×5120×5120: 39.9 µs; 7×11008×4096 in 3 parts 38.5 against
# 32.8 in one), so it takes no bucket; the last CTA's part-by-part read-back of the
# partials is the next suspect (docs/kernels.md, "Multi-wave splits").
@cake.schedule(target="sm_90a")
def gemm_bf16_splitk_swap_pp(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d,
                             L: LM.tensor1d, M: LM.i32, N: LM.i32, K: LM.i32, S: LM.i32):
    tiles_m = lm.cdiv(M, 16)
    tiles_n = lm.cdiv(N, 64)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    parts = lm.max(lm.min(S, k_tiles), 1)
    per = lm.cdiv(k_tiles, parts)                # K stages of one part
    units = tiles_m * tiles_n * parts
    lm.grid(lm.min(units, lm.sm_count()))

    pool = lm.smem(184320)                       # 18 stages × (8 KiB of B + 2 KiB of A)
    sb = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=18, swizzle=128b)
    sa = pool.view(offset=147456, shape=(16, 64), dtype=lm.bf16, stage=18, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=18)
    full = lm.barrier(count=18, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=18, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])    # math0 -> math1
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])    # math1 -> math0
    acc0 = lm.regs(shape=(64, 16), dtype=lm.f32, role=math0)  # tiles of Cᵀ
    acc1 = lm.regs(shape=(64, 16), dtype=lm.f32, role=math1)

    with load:
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            tile = u // parts
            part = u - tile * parts
            m_tile = tile % tiles_m
            n_tile = tile // tiles_m
            for k in lm.range(0, per):
                s = ((u // lm.num_blocks(0)) * per + k) % 18
                lm.wait(empty, stage=s)
                sb.tma_load(B, coords=(n_tile, part * per + k), stage=s, barrier=full)
                sa.tma_load(A, coords=(m_tile, part * per + k), stage=s, barrier=full)

    with math0:                                  # this CTA's units 0, 2, 4, ...
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            j = u // lm.num_blocks(0)                # this CTA's j-th unit
            if j % 2 == 0:
                tile = u // parts
                part = u - tile * parts
                m_tile = tile % tiles_m
                n_tile = tile // tiles_m
                if j > 0:
                    lm.wait(turn1)                   # math1 has issued unit j-1's MMAs
                for k in lm.range(0, per):
                    s = (j * per + k) % 18
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sb[s], sa[s], init=(k == 0))
                    if k == per - 1 and u + lm.num_blocks(0) < units:
                        lm.arrive(turn0)             # the unit's MMAs are issued: math1's turn
                    lm.commit(empty, stage=s)
                C.split_store(acc0, coords=(m_tile, n_tile), part=part, parts=parts,
                              workspace=W, counters=L, dtype=lm.bf16, transpose=True)
            else:
                lm.skip(full, stage=(j * per) % 18, count=per)              # math1's unit

    with math1:                                  # this CTA's units 1, 3, 5, ...
        for u in lm.range(lm.block_id(0), units, lm.num_blocks(0)):
            j = u // lm.num_blocks(0)
            if j % 2 == 1:
                tile = u // parts
                part = u - tile * parts
                m_tile = tile % tiles_m
                n_tile = tile // tiles_m
                lm.wait(turn0)
                for k in lm.range(0, per):
                    s = (j * per + k) % 18
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sb[s], sa[s], init=(k == 0))
                    if k == per - 1 and u + lm.num_blocks(0) < units:
                        lm.arrive(turn1)             # the unit's MMAs are issued: math0's turn
                    lm.commit(empty, stage=s)
                C.split_store(acc1, coords=(m_tile, n_tile), part=part, parts=parts,
                              workspace=W, counters=L, dtype=lm.bf16, transpose=True)
            else:
                lm.skip(full, stage=(j * per) % 18, count=per)              # math0's unit
