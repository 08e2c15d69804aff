# The planted shared-memory race for `cakec run --sanitize racecheck` (bug class
# `early_release`, made from examples/gemm_sm80.cake): the math role hands each stage back
# (`lm.arrive(empty)`) before the MMA that reads it (ldmatrix), so the load role's cp.async
# refill of that stage four steps later is ordered after the arrival, not after the reads: a
# write-after-read hazard between two warps' own accesses, which racecheck attributes to threads
# (a TMA write, as in early_release.cake, it attributes to none: 0 hazards). With NVRTC < 13.1 it
# also reports the correct gemm_sm80.cake (it misses cp.async arrivals): docs/run.md. `cakec
# verify` rejects it (CAKE-S003); `cakec run --unchecked --sanitize racecheck` runs it (on an
# sm_90 GPU, built for sm_90).
@cake.schedule(target="sm_80")
def sm80_early_release(lm, A: LM.tensor2d, B: LM.tensor2d, C: LM.tensor2d, M: LM.i32, N: LM.i32,
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
            lm.arrive(empty, stage=s)              # the bug: handed back before the MMA reads it
            lm.mma(acc, sa[s], sb[s], init=(k == 0))
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
