# view[s].store on sm_80: an mma.sync accumulator written into a stage (auto swizzle: 128b, the MMA operand's),
# read back by the next mma.sync through ldmatrix. sm_80 has no async proxy: lm.fence_proxy()
# emits no fence, only the role's named barrier (other warps' rows are read).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_80")
def chain80(lm, A: LM.tensor2d, B: LM.tensor2d, D: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 32), dtype=lm.bf16)
    sb = pool.view(offset=4096, shape=(64, 32), dtype=lm.bf16)
    sd = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16)
    se = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16)
    math = lm.role(warps=[0, 1, 2, 3])
    load = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    out = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with load:
        sa.copy_load(A, coords=(0, 0), barrier=full)
        sb.copy_load(B, coords=(0, 0), barrier=full)
        sd.copy_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(0, 0))
# CHECK: // store_chain_sm80.cake:26: se[0].store(acc.to(lm.bf16))
# CHECK: CakeOutBf16::sts_pair(cake_stage_addr<64u, 128u, 7u, 2u>(
# CHECK: // store_chain_sm80.cake:27: lm.fence_proxy()
# CHECK-NEXT: cake_named_barrier_sync({{[0-9]}}u, 128u);  // every thread of `math` has written and fenced its part
# CHECK-NEXT: // store_chain_sm80.cake:28: lm.mma(out, se, sd, init=True)
