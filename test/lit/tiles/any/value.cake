# `lm.any(...)` differs between warps, so it is only ever the whole condition of an `if`:
# bound to a name it could steer uniform control flow.
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
            y = lm.any(x > m + 8.0)
            if y:
                m = lm.max(m, x)
            A.store(m, coords=(t, 0))
# CHECK: value.cake:14:17: error: `lm.any(...)` differs between the warps of a role, so it may only be the whole condition of an `if` [CAKE-T011]
# CHECK-NEXT: {{^}}            y = lm.any(x > m + 8.0)
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: write `if lm.any(pred):` and keep the branch's work inside it
