# `lm.any` reduces a predicate tile, not an f32 one.
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
            if lm.any(x):
                m = lm.max(m, x)
            A.store(m, coords=(t, 0))
# CHECK: not_predicate.cake:13:23: error: `lm.any` reduces a predicate tile (a tile comparison such as `m_new > m + 8.0`), got an f32 tile [CAKE-T007]
# CHECK-NEXT: {{^}}            if lm.any(x):
# CHECK-NEXT: {{^}}                      ^
# CHECK-NEXT: not_predicate.cake:12:13: note: `x` is a register tile, declared here
# CHECK-NEXT: {{^}}            x = A.load(coords=(t, 0), shape=(64, 1), dtype=lm.f32)
# CHECK-NEXT: {{^}}            ^
