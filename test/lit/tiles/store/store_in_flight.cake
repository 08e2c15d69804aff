# CAKE-S041: a stage overwritten by `store` while this role's own wgmma may still read it.
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
        lm.mma(out, se, sd, init=True)
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(0, 0))
# CHECK: store_in_flight.cake:23:9: error: role math overwrites se[0] with `store` at line 23 while its own MMA at line 22 may still read it asynchronously [CAKE-S041]
# CHECK-NEXT: {{^}}        se[0].store(acc.to(lm.bf16))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_in_flight.cake:22:9: note: this MMA reads the stage asynchronously
# CHECK-NEXT: {{^}}        lm.mma(out, se, sd, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: retire the MMA first: `lm.commit` its group to a barrier (and, on sm_100a, wait on that barrier) or read its accumulator before the store, or store into another stage
# CHECK-NOT: error
