# view[s].T on sm_100a: tcgen05.mma reads both operands MN-major: the instruction descriptor
# has a_major = b_major = MN (bits 15, 16: 0x8218490), the SMEM descriptors the MN-major LBO/SBO.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_100a")
def trans100(lm, At: LM.tma2d, Bt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    with load:
        sa.tma_load(At, coords=(0, 0), barrier=full)
        sb.tma_load(Bt, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa.T, sb.T, init=True)
        lm.commit(done)
    with epi:
        lm.wait(done)
        O.store(acc.to(lm.f32), coords=(0, 0))
# CHECK: // transpose_sm100.cake:22: lm.mma(acc, sa.T, sb.T, init=True)
# CHECK: cake_tcgen05_mma_f16(cake_tmem, (((u64)0x40004040u << 32) | (u32)(0x02000000u + (((cake_a) & 0x3FFFFu) >> 4))), (((u64)0x40004040u << 32) | (u32)(0x02000000u + (((cake_b) & 0x3FFFFu) >> 4))), 0x8218490u, 0u);
