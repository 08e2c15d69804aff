# Distilled from the H200 (2026-12-01): the first chunked KDA prefill kept its 128-row state
# and 64-row U and O accumulators in one warpgroup. An sm_90a role lays out every tile over
# the fragments of its tallest one, so the store of the 64-row U ran over 128 rows, past its
# 16 KiB stage and the end of shared memory (an illegal address at launch). A role whose
# tiles differ in row count is now refused at verify (the kernel splits the state into two
# 64-row halves instead: cakec/kernels/kda_prefill_chunked.cake).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(49152)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    su = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    s = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    u = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(u, sa, sa, init=True)
        su[0].store(u.to(lm.bf16))
        s = 0.0
        O.store(s, coords=(0, 0))
# CHECK: mixed_tile_rows.cake:14:12: error: register tiles of 64 and 128 rows in role `math` (a role's (M, N) tiles and (M, 1) vectors share one row count on sm_90a) is not yet supported for sm_90a code generation [CAKE-H100]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[4, 5, 6, 7])
# CHECK: mixed_tile_rows.cake:23:9: error: register tiles of 64 and 128 rows in role `math`
# CHECK-NEXT: {{^}}        su[0].store(u.to(lm.bf16))
