# view[s].T on sm_90a: both wgmma operands stored [K, M|N] and read MN-major (imm-trans-a and
# imm-trans-b = 1), descriptors with the MN-major LBO (one column block, 64 rows x 128 B =
# 8192 B) and SBO (8 rows x 128 B = 1024 B), K steps of 16 rows (2048 B).
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def trans(lm, At: LM.tma2d, Bt: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(At, coords=(0, 0), barrier=full)
        sb.tma_load(Bt, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa.T, sb[0].T, init=True)
        O.store(acc, coords=(0, 0))
# CHECK: "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
# CHECK: "{{.*}}, p, 1, 1, 1, 1;\n}\n"
# CHECK: // transpose_sm90.cake:21: lm.mma(acc, sa.T, sb[0].T, init=True)
# CHECK: const u32 cake_a = sa + cake_wg * 8192u;
# CHECK: cake_wgmma_m64n128k16_f32_bf16_bf16_ta_tb(acc[0], (((u64)0x40000040u << 32) | (u32)(0x02000000u + (((cake_a) & 0x3FFFFu) >> 4))), (((u64)0x40000040u << 32) | (u32)(0x02000000u + (((cake_b) & 0x3FFFFu) >> 4))), 0u);
# CHECK-NEXT: cake_wgmma_m64n128k16_f32_bf16_bf16_ta_tb(acc[0], (((u64)0x40000040u << 32) | (u32)(0x02000000u + (((cake_a) & 0x3FFFFu) >> 4) + 128u)), (((u64)0x40000040u << 32) | (u32)(0x02000000u + (((cake_b) & 0x3FFFFu) >> 4) + 128u)), 1u);
