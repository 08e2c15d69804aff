# CAKE-S061: the store into `sx` comes before the wait on the TMA load that fills `sk`'s
# bytes: the load may land after (or during) the store.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tma2d, K: LM.tma2d, O: LM.tensor2d, n: LM.i32):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    load = lm.role(warps=[4])
    math = lm.role(warps=[0, 1, 2, 3])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=1, prod=[math], cons=[load])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        for i in lm.range(0, n):
            lm.wait(empty)
            sk.tma_load(K, coords=(i, 0), barrier=full)
            sq.tma_load(Q, coords=(i, 0), barrier=full)
    with math:
        for i in lm.range(0, n):
            sx[0].store(lm.where(lm.col_index(s) == lm.row_index(s), 1.0, 0.0).to(lm.bf16))
            lm.fence_proxy()
            lm.wait(full)
            lm.mma(s, sq[0], sk[0], init=True)
            lm.fence_proxy()
            lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
            O.store(o.to(lm.bf16), coords=(i, 0))
            lm.arrive(empty)
# CHECK: smem_reuse_tma_landing.cake:23:13: error: `sx` reuses the bytes of `sk`, but an access of one is not ordered after the other's has completed: role math overwrites sx[0] with `store` at line 23 before the TMA load into it (line 19) is known to be complete with n = 1 [CAKE-S061]
# CHECK-NEXT: {{^}}            sx[0].store(lm.where(lm.col_index(s) == lm.row_index(s), 1.0, 0.0).to(lm.bf16))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_tma_landing.cake:19:13: note: the load is issued here
# CHECK-NEXT: {{^}}            sk.tma_load(K, coords=(i, 0), barrier=full)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_tma_landing.cake:9:10: note: `sx` is declared here to reuse the bytes of `sk`
# CHECK-NEXT: {{^}}    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: wait on the barrier the load completes before storing into the stage, or store into another stage; or place `sx` in bytes that no live view holds
