# Persistent GEMM: each block walks its share of the output tiles; the operand ring keeps
# turning across tiles (its stage is the running K-step count modulo 3), and the TMEM
# accumulator is handed to the epilogue through acc_full and back through acc_empty.
@cake.schedule(target="sm_100a")
def persistent_gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32,
                    K: LM.i32):
    lm.grid(lm.sm_count())
    n_tiles_n = lm.cdiv(N, 128)
    num_tiles = lm.cdiv(M, 128) * n_tiles_n
    my_tiles = lm.cdiv(num_tiles - lm.block_id(0), lm.num_blocks(0))
    k_tiles = lm.max(lm.cdiv(K, 64), 1)

    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[mma], cons=[load], init_count=1, pipeline=pipe)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    acc_empty = lm.barrier(count=1, prod=[epi], cons=[mma])   # first wait passes: acc starts free

    with load:
        for i in lm.range(0, my_tiles):
            tile = lm.block_id(0) + i * lm.num_blocks(0)
            for k in lm.range(0, k_tiles):
                s = (i * k_tiles + k) % 3
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(tile // n_tiles_n, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(tile % n_tiles_n, k), stage=s, barrier=full)

    with mma:
        for i in lm.range(0, my_tiles):
            lm.wait(acc_empty)                 # the epilogue has drained the previous tile
            for k in lm.range(0, k_tiles):
                s = (i * k_tiles + k) % 3
                lm.wait(full, stage=s)
                lm.mma(acc, sa[s], sb[s], init=(k == 0))
                lm.commit(empty, stage=s)
            lm.commit(acc_full)

    with epi:
        for i in lm.range(0, my_tiles):
            tile = lm.block_id(0) + i * lm.num_blocks(0)
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(tile // n_tiles_n, tile % n_tiles_n))
            lm.arrive(acc_empty)
