# A register tile's current value kept under another name is a copy (`p = m + 0.0`): the
# next `m = ...` leaves it as it was, and the emitted code reads the copy.
# RUN: cakec verify %s
# RUN: cakec emit %s --target sm_90a -o - | filecheck %s
@cake.schedule(target="sm_90a")
def copy(lm, A: LM.tensor2d, N: LM.i32):
    lm.grid(1)
    w = lm.role(warps=[0, 1, 2, 3], regs=240)
    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
    with w:
        m = 0.0
        for t in lm.range(0, N):
            p = m + 0.0
            m = m + 1.0
            A.store(p, coords=(t, 0))
# CHECK: float m[{{.*}}];  // (64, 1) lm.regs
# CHECK: p[{{.*}}] = (m[{{.*}}] + 0.0f);
# CHECK: m[{{.*}}] = (m[{{.*}}] + 1.0f);
# CHECK: cake_v[{{.*}}] = p[
