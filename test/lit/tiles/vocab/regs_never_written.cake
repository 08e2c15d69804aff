# CAKE-S040: a register tile that nothing writes (no assignment, MMA or lm.argmin), read as
# the register A of a wgmma: its registers hold whatever was there.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, At: LM.tma2d, Bt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p = lm.regs(shape=(128, 64), dtype=lm.bf16, role=math)
    with load:
        sa.tma_load(At, coords=(0, 0), barrier=full)
        sb.tma_load(Bt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, p, sb[0].T, init=True)
        O.store(acc, coords=(0, 0))
# CHECK: regs_never_written.cake:19:9: error: register tile `p` is read, but nothing writes it (no assignment, MMA or `lm.argmin`) [CAKE-S040]
# CHECK-NEXT: {{^}}        lm.mma(acc, p, sb[0].T, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: regs_never_written.cake:13:9: note: `p` is declared here
# CHECK-NEXT: {{^}}    p = lm.regs(shape=(128, 64), dtype=lm.bf16, role=math)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: write `p` before the read: assign it (`p = ...`) or make it the accumulator of an MMA
# CHECK-NOT: error
