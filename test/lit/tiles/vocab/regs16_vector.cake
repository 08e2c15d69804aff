# CAKE-T007: a 16-bit lm.regs tile is an (M, N) tile, not a vector.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def regs16(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d, R: LM.tensor2d, T: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p = lm.regs(shape=(128, 1), dtype=lm.bf16, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        p = acc.max(axis=1).to(lm.bf16)
        for t in lm.range(0, lm.max(T, 1)):
            lm.mma(out, p, sd, init=(t == 0))
        O.store(out, coords=(0, 0))
        R.store(p.to(lm.f32).max(axis=1), coords=(0, 0))
# CHECK: regs16_vector.cake:22:13: error: `p` is a (128, 1) bf16 tile: 16-bit register tiles are (M, N) tiles assigned a converted tile expression [CAKE-T007]
# CHECK-NEXT: {{^}}        p = acc.max(axis=1).to(lm.bf16)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: regs16_vector.cake:13:5: note: `p` is a register tile, declared here
# CHECK-NEXT: {{^}}    p = lm.regs(shape=(128, 1), dtype=lm.bf16, role=math)
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: help: assign `(...).to(lm.bf16)` of an (M, N) tile
# CHECK-NOT: error
