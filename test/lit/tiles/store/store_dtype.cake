# CAKE-D010: an f32 tile stored into a bf16 stage (no `.to`).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def chain(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        se[0].store(acc)
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(0, 0))
# CHECK: store_dtype.cake:22:9: error: `store` writes an f32 tile into `se`, whose elements are bf16 [CAKE-D010]
# CHECK-NEXT: {{^}}        se[0].store(acc)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~
# CHECK-NEXT: store_dtype.cake:9:10: note: `se` is declared here as bf16
# CHECK-NEXT: {{^}}    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: convert the tile first: `se[s].store(tile.to(lm.bf16))`
# CHECK-NOT: error
