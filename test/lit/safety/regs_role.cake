# CAKE-S017: on sm_90a the accumulator lives in the math role's registers; a separate
# epilogue role cannot read it.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_90a")
def gemm(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    epi = lm.role(warps=[12, 13, 14, 15])
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=3, prod=[math], cons=[load])
    done = lm.barrier(count=1, prod=[math], cons=[epi])
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(0, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 3, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: {{.*}}regs_role.cake:33:21: error: role epi reads register tile `acc`, which lives in the registers of role math [CAKE-S017]
# CHECK-NEXT: {{^}}        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK-NEXT: {{^}}                    ^~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}regs_role.cake:16:11: note: `acc` is declared here for role math
# CHECK-NEXT: {{^}}    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: do this inside `with math:`, or hand the data over through SMEM or TMEM
# CHECK-NOT: [CAKE-S0
