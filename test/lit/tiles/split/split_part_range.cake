# CAKE-T010: constant split_store parts out of range: a part below 0, parts below 1, or a
# part >= parts are refused at verify time (a runtime one traps on the device).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k_neg(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d, L: LM.tensor1d,
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
        C.split_store(acc, coords=(0, 0), part=-1, parts=S, workspace=W,
                      counters=L, dtype=lm.bf16)
@cake.schedule(target="sm_90a")
def k_zero(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d, L: LM.tensor1d,
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
        C.split_store(acc, coords=(0, 0), part=lm.block_id(0), parts=0, workspace=W,
                      counters=L, dtype=lm.bf16)
@cake.schedule(target="sm_90a")
def k_past(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d, L: LM.tensor1d,
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
        C.split_store(acc, coords=(0, 0), part=3, parts=2, workspace=W,
                      counters=L, dtype=lm.bf16)
# CHECK: split_part_range.cake:20:48: error: `part` must be at least 0, got -1 [CAKE-T010]
# CHECK-NEXT: {{^}}        C.split_store(acc, coords=(0, 0), part=-1, parts=S, workspace=W,
# CHECK-NEXT: {{^}}                                               ^~
# CHECK: split_part_range.cake:38:70: error: `parts` must be at least 1, got 0 [CAKE-T010]
# CHECK-NEXT: {{^}}        C.split_store(acc, coords=(0, 0), part=lm.block_id(0), parts=0, workspace=W,
# CHECK-NEXT: {{^}}                                                                     ^
# CHECK: split_part_range.cake:56:48: error: `part` is 3, but a tile split in 2 parts has parts 0..1 [CAKE-T010]
# CHECK-NEXT: {{^}}        C.split_store(acc, coords=(0, 0), part=3, parts=2, workspace=W,
# CHECK-NEXT: {{^}}                                               ^
# CHECK-NEXT: {{^}}help: the part is this CTA's share of the tile's K range, in [0, parts)
# CHECK-NOT: error
