# Two split_stores of one output sharing its workspace and counters verify when no path runs
# both for one tile and part: the two branches of an `if`, or two different tiles.
# RUN: cakec verify %s
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
        if K > 64:
            C.split_store(acc, coords=(0, 0), part=lm.block_id(0), parts=S, workspace=W,
                          counters=L, dtype=lm.bf16)
        else:
            C.split_store(acc, coords=(0, 0), part=lm.block_id(0), parts=S, workspace=W,
                          counters=L, dtype=lm.bf16)
        C.split_store(acc, coords=(1, 0), part=lm.block_id(0), parts=S, workspace=W,
                      counters=L, dtype=lm.bf16)
