# A register A operand must have the B view's dtype: an f16 tile against a bf16 view.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def chain(lm, Q: LM.tma2d, K: LM.tma2d, Vt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(49152)
    sq = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sk = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sv = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    s_acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o_acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sq.tma_load(Q, coords=(0, 0), barrier=full)
        sk.tma_load(K, coords=(0, 0), barrier=full)
        sv.tma_load(Vt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(s_acc, sq, sk, init=True)
        p = lm.exp2(s_acc)
        lm.mma(o_acc, p.to(lm.f16), sv, init=True)
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))

# CHECK: register_a_dtype.cake:22:9: error: `lm.mma` operands disagree: `a` (`p.to(lm.f16)`) is f16 but `b` (`sv`) is bf16 [CAKE-D002]
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p.to(lm.f16), sv, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: register_a_dtype.cake:22:23: note: `p.to(lm.f16)` is declared here as f16
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p.to(lm.f16), sv, init=True)
# CHECK-NEXT: {{^}}                      ^~~~~~~~~~~~
# CHECK-NEXT: register_a_dtype.cake:8:10: note: `sv` is declared here as bf16
# CHECK-NEXT: {{^}}    sv = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: convert the register tile to bf16, e.g. `.to(lm.bf16)`
