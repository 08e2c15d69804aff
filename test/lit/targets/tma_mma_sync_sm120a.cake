# RUN: cakec emit %s --emit cuda | filecheck --check-prefix=CUDA %s
# RUN: cakec emit %s --emit ptx | filecheck --check-prefix=PTX %s
# Consumer Blackwell has TMA but no wgmma or TMEM: TMA loads as on sm_90a feed ldmatrix +
# mma.sync on a register accumulator, within its 99 KiB of shared memory.
# CUDA: cake_tma_load_2d(sa + (u32)s * 16384u, &A_tmap0, full + 8u * s, k * 64, m_tile * 128);
# CUDA: float acc[4][8][4];  // 128x128 f32: warps as 2x2, each 64x64 in mma.sync m16n8 fragments
# CUDA: cake_mma_sync_tile<4, 8, 4, CakeOperand<128, 16384, true>, CakeOperand<128, 16384, true>, CakeMma_m16n8k16_f32_bf16_bf16>
# CUDA: cake_store_mma_sync_tile<4, 8, CakeOutBf16>(acc, C,
# PTX: .version 8.7
# PTX-NEXT: .target sm_120a
# PTX: cp.async.bulk.tensor.2d
# PTX: mbarrier.try_wait.parity
# PTX: ldmatrix.sync.aligned.m8n8.x4.shared.b16
# PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
@cake.schedule(target="sm_120a")
def gemm_tma_sm120a(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    tiles_m = lm.cdiv(M, 128)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    lm.grid(tiles_m * lm.cdiv(N, 128))
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    load = lm.role(warps=[4])
    math = lm.role(warps=[0, 1, 2, 3])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        m_tile = lm.block_id(0) % tiles_m
        n_tile = lm.block_id(0) // tiles_m
        for k in lm.range(0, k_tiles):
            s = k % 2
            lm.wait(empty, stage=s)
            sa.tma_load(A, coords=(m_tile, k), stage=s, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=s, barrier=full)
    with math:
        m_tile = lm.block_id(0) % tiles_m
        n_tile = lm.block_id(0) // tiles_m
        for k in lm.range(0, k_tiles):
            s = k % 2
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(k == 0))
            lm.commit(empty, stage=s)
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
