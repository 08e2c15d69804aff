# CAKE-S017: a register tile lives in its role's registers; another role that reads it (here in
# tile arithmetic, never MMA-written) would read its own, unrelated registers.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, At: LM.tma2d, Bt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    q = lm.regs(shape=(128, 128), dtype=lm.f32, role=load)
    with load:
        sa.tma_load(At, coords=(0, 0), barrier=full)
        sb.tma_load(Bt, coords=(0, 0), barrier=full)
        q = 1.0
    with math:
        lm.wait(full)
        lm.mma(acc, sa.T, sb[0].T, init=True)
        O.store(acc + q, coords=(0, 0))
# CHECK: regs_other_role_read.cake:21:17: error: role math reads register tile `q`, which lives in the registers of role load [CAKE-S017]
# CHECK-NEXT: {{^}}        O.store(acc + q, coords=(0, 0))
# CHECK-NEXT: {{^}}                ^~~~~~~
# CHECK-NEXT: regs_other_role_read.cake:13:9: note: `q` is declared here for role load
# CHECK-NEXT: {{^}}    q = lm.regs(shape=(128, 128), dtype=lm.f32, role=load)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: do this inside `with load:`, or hand the data over through SMEM or TMEM
# CHECK-NOT: error
