# Independent mistakes are all reported, in source order. Statements that only depend on
# a failed definition (pool, sa, sb, mma, full, the loop variable k) report nothing more,
# and the body of a block whose header failed is still checked: no cascades, no hiding.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, Q: LM.tma2d, n: LM.i32):
    pool = lm.smem(-1)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=2)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.rol(warps=[1])
    full = lm.barrier(count=2, prod=[load], cons=[mma])
    with load:
        for k in lm.range(0, 4):
            sa.tma_load(Q, coords=(0, k), stage=k % 2, barrier=full)
            lm.wait(ful, stage=k % 2)
    with mma:
        for k in n:
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
            lm.fence_prxy()
# CHECK: several_errors.cake:7:20: error: `bytes` must be at least 1, got -1 [CAKE-T010]
# CHECK-NEXT: {{^}}    pool = lm.smem(-1)
# CHECK-NEXT: {{^}}                   ^~
# CHECK-NEXT: several_errors.cake:12:11: error: unknown builtin `lm.rol` [CAKE-T003]
# CHECK-NEXT: {{^}}    mma = lm.rol(warps=[1])
# CHECK-NEXT: {{^}}          ^~~~~~
# CHECK-NEXT: help: did you mean `role`?
# CHECK-NEXT: several_errors.cake:17:21: error: undefined name `ful` [CAKE-T001]
# CHECK-NEXT: {{^}}            lm.wait(ful, stage=k % 2)
# CHECK-NEXT: {{^}}                    ^~~
# CHECK-NEXT: help: did you mean `full`?
# CHECK-NEXT: several_errors.cake:19:18: error: loops iterate over `lm.range(...)` [CAKE-T007]
# CHECK-NEXT: {{^}}        for k in n:
# CHECK-NEXT: {{^}}                 ^
# CHECK-NEXT: help: write `for i in lm.range(start, stop):`
# CHECK-NEXT: several_errors.cake:22:13: error: unknown builtin `lm.fence_prxy` [CAKE-T003]
# CHECK-NEXT: {{^}}            lm.fence_prxy()
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~
# CHECK-NEXT: help: did you mean `fence_proxy`?
# CHECK-NOT: error
