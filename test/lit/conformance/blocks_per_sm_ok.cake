# Near miss of blocks_per_sm.cake: three blocks of 128 threads and 64 KiB of SMEM fit an
# H200 SM; the launch bound says so to ptxas (168 registers a thread at most).
# RUN: cakec verify %s
# RUN: cakec emit %s | filecheck %s
@cake.schedule(target="sm_90a", blocks_per_sm=3)
def k(lm, C: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 128), dtype=lm.f32, role=math)
    with math:
        acc = 0.0
        C.store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: __launch_bounds__(128, 3)
