# CAKE-S044: the same register-A wgmma issued on every trip, `p_t` reassigned in between, with
# nothing retiring the wgmma: each trip packs the new `p_t` into the A fragment registers the
# previous trip's wgmma may still read (issue 14: a P tile overwritten while the P·V wgmma
# still reads it). An A operand that does not change is fine (lit/tiles/vocab/regs16_ok.cake).
# register_a_repack_ok.cake is the near miss.
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
    p_t = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sq.tma_load(Q, coords=(0, 0), barrier=full)
        sk.tma_load(K, coords=(0, 0), barrier=full)
        sv.tma_load(Vt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(s_acc, sq, sk, init=True)
        p_t = lm.exp2(s_acc)
        for j in lm.range(0, 4):
            lm.mma(o_acc, p_t.to(lm.bf16), sv, init=(j == 0))
            p_t = p_t * 0.5
        O.tma_store(o_acc.to(lm.bf16), coords=(0, 0))
# CHECK: register_a_repack.cake:28:13: error: the MMA at line 28 packs `p_t` into its register A operand again (j = 1), reassigned at line 29, while its previous instance may still read those registers: nothing retired it since [CAKE-S044]
# CHECK-NEXT: {{^}}            lm.mma(o_acc, p_t.to(lm.bf16), sv, init=(j == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: register_a_repack.cake:29:13: note: `p_t` is reassigned here
# CHECK-NEXT: {{^}}            p_t = p_t * 0.5
# CHECK-NEXT: {{^}}            ^~~
# CHECK-NEXT: register_a_repack.cake:27:9: note: this loop issues the MMA again; a wgmma reads its register A operand asynchronously, until a `wgmma.wait_group` retires it
# CHECK-NEXT: {{^}}        for j in lm.range(0, 4):
# CHECK-NEXT: {{^}}        ^~~
# CHECK-NEXT: help: retire the previous MMA before the next one is issued: read `o_acc` (e.g. the rescale `o_acc = o_acc * alpha`) or an accumulator of a later MMA of the role in between
# CHECK-NOT: error
