# `if lm.any(...)` is a branch each warp takes on its own: a barrier arrival (or an MMA,
# copy, loop or uniform branch) inside it would run in some warps of the role only.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tensor2d, N: LM.i32):
    lm.grid(1)
    w = lm.role(warps=[0, 1, 2, 3], regs=240)
    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
    b = lm.barrier(count=1, prod=[w], cons=[w])
    with w:
        m = 0.0
        for t in lm.range(0, N):
            x = A.load(coords=(t, 0), shape=(64, 1), dtype=lm.f32)
            if lm.any(x > m + 8.0):
                m = lm.max(m, x)
                lm.arrive(b)
            A.store(m, coords=(t, 0))
# CHECK: arrive_inside.cake:16:17: error: `arrive` inside `if lm.any(...):`, a branch each warp takes or not on its own: only register-tile arithmetic may run there [CAKE-T011]
# CHECK-NEXT: {{^}}                lm.arrive(b)
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~
# CHECK-NEXT: arrive_inside.cake:14:13: note: the per-warp branch
# CHECK-NEXT: {{^}}            if lm.any(x > m + 8.0):
# CHECK-NEXT: {{^}}            ^~
# CHECK-NEXT: help: move it out of the branch; MMAs, barriers, copies, loops and other branches run in every warp of the role alike
