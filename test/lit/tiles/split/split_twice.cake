# CAKE-S024: the same tile and part stored twice on one path (the counter counts the CTA twice).
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
        part = lm.block_id(0)
        C.split_store(acc, coords=(lm.block_id(1), 0), part=part, parts=S, workspace=W,
                      counters=L, dtype=lm.bf16)
        if K > 64:
            C.split_store(acc, coords=(lm.block_id(1), 0), part=part, parts=S, workspace=W,
                          counters=L, dtype=lm.bf16)
# CHECK: split_twice.cake:23:13: error: this split_store stores the same tile and part of `C` as the one at line 20, on the same path: the CTA arrives twice on the tile's counter, so the sum completes before every part is written and the counter is not 0 at the next launch [CAKE-S024]
# CHECK-NEXT: {{^}}            C.split_store(acc, coords=(lm.block_id(1), 0), part=part, parts=S, workspace=W,
# CHECK-NEXT: {{^}}            ^
# CHECK-NEXT: split_twice.cake:20:9: note: the first split_store of that tile and part is here
# CHECK-NEXT: {{^}}        C.split_store(acc, coords=(lm.block_id(1), 0), part=part, parts=S, workspace=W,
# CHECK-NEXT: {{^}}        ^
# CHECK-NEXT: help: store each (tile, part) once: one split_store per tile, or the other on the other branch of an `if`
# CHECK-NOT: error
