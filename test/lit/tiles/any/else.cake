# A per-warp branch has no `else` (the other path's work goes before it).
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
            else:
                m = m + 1.0
            A.store(m, coords=(t, 0))
# CHECK: else.cake:16:17: error: `if lm.any(...):` takes no `else`: each warp takes the branch or not on its own [CAKE-T011]
# CHECK-NEXT: {{^}}                m = m + 1.0
# CHECK-NEXT: {{^}}                ^
# CHECK-NEXT: else.cake:13:13: note: the per-warp branch
# CHECK-NEXT: {{^}}            if lm.any(x > m + 8.0):
# CHECK-NEXT: {{^}}            ^~
# CHECK-NEXT: help: put the other path's work before the branch, unconditionally
