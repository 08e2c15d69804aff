# CAKE-S043: a loop-carried state tile, updated by MMA, is staged into SMEM as the next
# iteration's operand before its update, so the next iteration reads the state of the one
# before (the copy must follow the update; reading the old copy in the updating iteration
# itself is the chunked form's O = Q̃·S_old: stale_state_copy_ok.cake).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, O: LM.tensor2d, S: LM.tensor2d, N: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    ss = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        s = 0.0
        ss[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        for n in lm.range(0, N):
            lm.mma(o, sa, ss[0], init=True)
            O.store(o, coords=(n, 0))
            ss[0].store(s.to(lm.bf16))
            lm.fence_proxy()
            s = s * 0.5
            lm.mma(s, sa, sa)
        S.store(s, coords=(0, 0))
# CHECK: stale_state_copy.cake:24:13: error: the MMA at line 24 reads ss[0], the copy of `s` stored at line 26, but `s` has been written since (line 28, an earlier iteration): it reads a stale state with N = 2 [CAKE-S043]
# CHECK-NEXT: {{^}}            lm.mma(o, sa, ss[0], init=True)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: stale_state_copy.cake:26:13: note: `s` is copied into ss[0] here
# CHECK-NEXT: {{^}}            ss[0].store(s.to(lm.bf16))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: stale_state_copy.cake:28:13: note: `s` is written again here, and not copied after it
# CHECK-NEXT: {{^}}            s = s * 0.5
# CHECK-NEXT: {{^}}            ^{{$}}
# CHECK-NEXT: help: store `s` into ss[0] again after line 28 (once that write has completed: reading the tile waits for it), before the next iteration's MMA reads the stage
# CHECK-NOT: error
