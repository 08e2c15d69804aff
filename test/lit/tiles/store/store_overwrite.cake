# CAKE-S003: the epilogue rewrites a stage with `store` before the MMA role has read the previous
# contents (no empty barrier hands the stage back).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def war100(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    out = lm.tmem(cols=128, width=64, shape=(128, 64), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=3)
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    e_full = lm.barrier(count=1, prod=[epi], cons=[mma])
    out_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        lm.commit(acc_full)
        for t in lm.range(0, 2):
            lm.wait(e_full)
            lm.mma(out, se, sd, init=(t == 0))
        lm.commit(out_full)
    with epi:
        lm.wait(acc_full)
        for t in lm.range(0, 2):
            se[0].store((acc * (t + 1)).to(lm.bf16))
            lm.fence_proxy()
            lm.arrive(e_full)
        lm.wait(out_full)
        O.store(out.to(lm.f32), coords=(0, 0))
# CHECK: store_overwrite.cake:35:13: error: role epi refills se[0] at line 35 before role mma has read its previous contents (MMA at line 30) [CAKE-S003]
# CHECK-NEXT: {{^}}            se[0].store((acc * (t + 1)).to(lm.bf16))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: store_overwrite.cake:30:13: note: role mma reads se[0] here
# CHECK-NEXT: {{^}}            lm.mma(out, se, sd, init=(t == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: before refilling, wait on a barrier that role mma releases with `lm.commit` after its MMA (an empty barrier)
# CHECK-NOT: error
