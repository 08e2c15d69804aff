# CAKE-S061: the store into `sx` comes while the MMA that reads `sk` may still read it
# (nothing retired it: its accumulator `s` is read only later).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    math = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        sk[0].store(K.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        sq[0].store(Q.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        lm.fence_proxy()
        lm.mma(s, sq[0], sk[0], init=True)
        sx[0].store(lm.where(lm.col_index(s) == lm.row_index(s), 1.0, 0.0).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        O.store(o.to(lm.bf16), coords=(0, 0))
# CHECK: smem_reuse_inflight.cake:18:9: error: `sx` reuses the bytes of `sk`, but an access of one is not ordered after the other's has completed: role math overwrites sx[0] with `store` at line 18 while its own MMA at line 17 may still read it asynchronously [CAKE-S061]
# CHECK-NEXT: {{^}}        sx[0].store(lm.where(lm.col_index(s) == lm.row_index(s), 1.0, 0.0).to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_inflight.cake:17:9: note: this MMA reads the stage asynchronously
# CHECK-NEXT: {{^}}        lm.mma(s, sq[0], sk[0], init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: smem_reuse_inflight.cake:9:10: note: `sx` is declared here to reuse the bytes of `sk`
# CHECK-NEXT: {{^}}    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: retire the MMA first: `lm.commit` its group to a barrier (and, on sm_100a, wait on that barrier) or read its accumulator before the store, or store into another stage; or place `sx` in bytes that no live view holds
