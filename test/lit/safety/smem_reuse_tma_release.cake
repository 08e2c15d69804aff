# CAKE-S061 across roles: `lm.arrive(empty)` hands `sk`'s bytes back to the TMA of the
# next iteration while the MMA that reads `sx` in them may still read.
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
            lm.wait(full)
            lm.mma(s, sq[0], sk[0], init=True)
            sx[0].store(s.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
            lm.arrive(empty)
            O.store(o.to(lm.bf16), coords=(i, 0))
# CHECK: smem_reuse_tma_release.cake:28:13: error: `sx` reuses the bytes of `sk`, but an access of one is not ordered after the other's has completed: `lm.arrive` at line 28 releases sk[0] while the MMA at line 27 may still read it with n = 2 [CAKE-S061]
# CHECK-NEXT: {{^}}            lm.arrive(empty)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_tma_release.cake:27:13: note: this MMA reads the stage asynchronously
# CHECK-NEXT: {{^}}            lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_tma_release.cake:19:13: note: role load refills sk[0] here
# CHECK-NEXT: {{^}}            sk.tma_load(K, coords=(i, 0), barrier=full)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_tma_release.cake:9:10: note: `sx` is declared here to reuse the bytes of `sk`
# CHECK-NEXT: {{^}}    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use `lm.commit(empty, stage=...)`, which arrives only once the role's MMAs have completed, or arrive after reading the MMA's register accumulator (the read waits for it); or place `sx` in bytes that no live view holds
