# CAKE-H020: 16-bit lm.regs tiles are held packed in the wgmma layout only (here sm_100a, whose
# register accumulators take the mma.sync layout).
# RUN: not cakec verify --target sm_100a %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def regs16(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p = lm.regs(shape=(128, 128), dtype=lm.bf16, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        p = (acc * 0.5).to(lm.bf16)
        O.store(p.to(lm.f32), coords=(0, 0))
# CHECK: regs16_sm100.cake:20:9: error: a 16-bit register tile (held packed, two columns per register) is lowered only in the wgmma layout of sm_90a, not on sm_100a [CAKE-H020]
# CHECK-NEXT: {{^}}        p = (acc * 0.5).to(lm.bf16)
# CHECK-NEXT: {{^}}        ^
# CHECK-NEXT: help: keep the tile in f32 (`lm.regs(..., dtype=lm.f32)`) and convert where it is used, or target sm_90a
# CHECK-NOT: error
