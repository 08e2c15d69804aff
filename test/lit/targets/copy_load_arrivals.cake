# RUN: cakec opt %s --pass-pipeline derive | filecheck %s
# copy_load arrives once per thread of its role: 2 warps x 32 threads x init_count 1 = 64, and
# it moves no transaction bytes (cp.async completes through the arrivals, not tx-count).
# CHECK: sym_name = "full"{{.*}}cake.arrivals = 64 : i64, cake.tx_bytes = 0 : i64
@cake.schedule(target="sm_80")
def copy_arrivals(lm, A: LM.tensor2d, B: LM.tensor2d, C: LM.tensor2d):
    lm.grid(1)
    pool = lm.smem(16384)
    sa = pool.view(offset=0, shape=(64, 32), dtype=lm.bf16, stage=1)
    sb = pool.view(offset=8192, shape=(64, 32), dtype=lm.bf16, stage=1)
    math = lm.role(warps=[0, 1])
    load = lm.role(warps=[2, 3])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=1)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.copy_load(A, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sa, init=True)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
