# CAKE-H009: the split_store's 4-byte flag counts in the shared memory a block needs.
# Without the flag the block would need exactly the 232448 bytes sm_90a allows; the near miss,
# 4 bytes fewer in the pool, verifies.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
# RUN: sed "s/lm.smem(230408)/lm.smem(230404)/" %s > %t.cake && cakec verify %t.cake
@cake.schedule(target="sm_90a")
def k(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tensor2d, W: LM.tensor3d, L: LM.tensor1d,
      V: LM.tensor2d, K: LM.i32, S: LM.i32):
    pool = lm.smem(230408)
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
        C.split_store(acc, coords=(0, 0), part=lm.block_id(0), parts=S, workspace=W,
                      counters=L, dtype=lm.bf16)
# CHECK: split_smem.cake:9:12: error: this kernel needs 232452 bytes of shared memory per block (231416 for pools and their alignment, 4 for split_store flags, 8 for mbarriers, 1024 reserved by the system), more than the 232448 bytes sm_90a allows [CAKE-H009]
# CHECK-NEXT: {{^}}    pool = lm.smem(230408)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~
# CHECK-NEXT: split_smem.cake:10:10: note: view `sa` takes 1 × 8192 bytes
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
# CHECK-NEXT: {{^}}         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: shrink the pool (fewer stages or smaller tiles) by at least 4 bytes
# CHECK-NOT: error
