# `if lm.any(pred):` verifies and emits: this thread's elements of the predicate or-ed, the
# warp's lanes combined by vote.any, a C `if` on that (register arithmetic inside).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tensor2d, N: LM.i32):
    lm.grid(1)
    w = lm.role(warps=[0, 1, 2, 3], regs=240)
    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
    with w:
        m = 0.0
        for t in lm.range(0, N):
            x = A.load(coords=(t, 0), shape=(64, 1), dtype=lm.f32)
            if lm.any(x > m + 8.0):
                m = lm.max(m, x)
            A.store(m, coords=(t, 0))
# CHECK: bool cake_any_ = false;
# CHECK: cake_any_ |= (x[{{.*}}] > (m[{{.*}}] + 8.0f));
# CHECK: cake_any_ = __any_sync(0xffffffffu, cake_any_);
# CHECK: if (cake_any_) {
# CHECK: m[{{.*}}] = fmaxf(m[{{.*}}], x[{{.*}}]);
