# examples/gemm_tcgen05.cake with e4m3 operands (tcgen05.mma kind::f8f6f4, K = 128 per
# 128-byte stage row, f32 accumulation in TMEM, bf16 out): the form assembled for
# sm_100a by test/unit/test_targets_assemble.py-style checks (no Blackwell GPU to run it).
@cake.schedule(target="sm_100a")
def tcgen05_e4m3(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    tiles_n = lm.cdiv(N, 256)
    tiles = tiles_m * tiles_n
    k_tiles = lm.max(lm.cdiv(K, 128), 1)          # ≥ 1 step: the accumulator is always written
    lm.grid(lm.min(tiles, lm.sm_count()))

    pool = lm.smem(196608)                       # 4 stages × (16 KiB of A + 32 KiB of B)
    sa = pool.view(offset=0, shape=(128, 128), dtype=lm.e4m3, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(256, 128), dtype=lm.e4m3, stage=4, swizzle=128b)
    acc = lm.tmem(cols=0, width=256, shape=(128, 256), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epilogue = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epilogue], init_count=1)
    acc_empty = lm.barrier(count=1, prod=[epilogue], cons=[mma], init_count=1)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m
            n_tile = t // tiles_m
            for k in lm.range(0, k_tiles):
                # The ring continues across tiles: this CTA's k-th stage of its j-th tile.
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)

    with mma:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            lm.wait(acc_empty)                   # the epilogue has read the previous tile
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            lm.commit(acc_full)

    with epilogue:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            m_tile = t % tiles_m
            n_tile = t // tiles_m
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
            lm.arrive(acc_empty)
