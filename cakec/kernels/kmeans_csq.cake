# ||c||² for Flash-KMeans (examples/kmeans_assign.cake): Csq[b, j] = Σ_d C[b, j, d]², for
# C [B, K, D] bf16 (D ≤ 128), run once per assignment call.
#
# One CTA per (128-centroid tile, batch): a 3-D TMA box brings the tile into SMEM (rows past
# K read zeros and are not stored), and one warpgroup sums each row's squares: the four
# lanes of a row's quad each read a quarter of the row, then add their sums.
@cake.schedule(target="sm_90a")
def kmeans_csq(lm, C: LM.tma3d, Csq: LM.tensor2d, B: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(K, 128), B)
    k_tile = lm.block_id(0)
    b = lm.block_id(1)

    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)

    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    c_full = lm.barrier(count=1, prod=[load], cons=[math])

    with load:
        sc.tma_load(C, coords=(b, k_tile, 0), barrier=c_full)

    with math:
        lm.wait(c_full)
        Csq.store(lm.sum_sq(sc, axis=1), coords=(b, k_tile))
