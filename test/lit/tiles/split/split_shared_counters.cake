# CAKE-S024: one pair of workspace and counters shared by two outputs.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d, L: LM.tensor1d,
      V: LM.tensor2d, K: LM.i32, S: LM.i32):
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, lm.block_id(0)), barrier=full)
        sb.tma_load(B, coords=(0, lm.block_id(0)), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        C.split_store(acc, coords=(0, 0), part=0, parts=S, workspace=W, counters=L)
        V.split_store(acc, coords=(0, 0), part=0, parts=S, workspace=W, counters=L)
# CHECK: split_shared_counters.cake:20:9: error: tensor `W` is also the workspace of the split_store of `C`: other CTAs' partial sums and arrivals would race with this access [CAKE-S024]
# CHECK-NEXT: {{^}}        V.split_store(acc, coords=(0, 0), part=0, parts=S, workspace=W, counters=L)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: split_shared_counters.cake:19:9: note: the split_store is here
# CHECK-NEXT: {{^}}        C.split_store(acc, coords=(0, 0), part=0, parts=S, workspace=W, counters=L)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give each split_store output its own workspace and counters, and touch them nowhere else
# CHECK-NOT: error
