# A register A operand (wgmma's RS form) has no lowering on sm_100a: tcgen05.mma reads A
# from SMEM or TMEM, and the role's register accumulator there is mma.sync's.
# RUN: not cakec verify %s --target sm_100a 2>&1 | filecheck --strict-whitespace %s
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
        lm.mma(o_acc, p.to(lm.bf16), sv, init=True)
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))

# CHECK: register_a_sm100a.cake:23:9: error: mma.sync on sm_100a has no lowering for an A operand in registers [CAKE-H017]
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p.to(lm.bf16), sv, init=True)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: register_a_sm100a.cake:23:23: note: the A operand is this register tile
# CHECK-NEXT: {{^}}        lm.mma(o_acc, p.to(lm.bf16), sv, init=True)
# CHECK-NEXT: {{^}}                      ^~~~~~~~~~~~~
# CHECK-NEXT: help: stage A in SMEM (a view stage) or target sm_90a with a bf16/f16 tile, e.g. `p.to(lm.bf16)`
