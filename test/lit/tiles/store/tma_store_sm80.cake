# CAKE-H002: a TMA store of a staged view on sm_80, which has no TMA.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_80")
def tmast(lm, A: LM.tensor2d, B: LM.tensor2d, O: LM.tma2d, M: LM.i32, N: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    mt = lm.block_id(0)
    nt = lm.block_id(1)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    so = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.copy_load(A, coords=(mt, 0), barrier=full)
        sb.copy_load(B, coords=(nt, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        so[0].store((acc + 1.0).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so[0], coords=(mt, nt))
# CHECK: tma_store_sm80.cake:24:9: error: `tma_store` needs the Tensor Memory Accelerator (TMA), which sm_80 does not have [CAKE-H002]
# CHECK-NEXT: {{^}}        O.tma_store(so[0], coords=(mt, nt))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: target sm_90a, sm_100a, sm_103a, sm_120a or sm_121a
# CHECK-NOT: error
