# RUN: cakec opt %s --pass-pipeline derive | filecheck %s
# The LANGUAGE.md Hopper GEMM sketch: wgmma for a register accumulator split over two
# warpgroups, and a tile store straight from registers (no compiler scratch).
@cake.schedule(target="sm_90a")
def gemm_bf16(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 256))
    m_tile = lm.block_id(0)
    n_tile = lm.block_id(1)
    k_tiles = lm.cdiv(K, 64)

    pool = lm.smem(147456)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(256, 64), dtype=lm.bf16, stage=3, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=3)
    full = lm.barrier(count=3, prod=[load], cons=[math], init_count=1, pipeline=pipe)
    empty = lm.barrier(count=3, prod=[math], cons=[load], init_count=1, pipeline=pipe)
    acc = lm.regs(shape=(128, 256), dtype=lm.f32, role=math)

    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 3)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 3, barrier=full)
            sb.tma_load(B, coords=(n_tile, k), stage=k % 3, barrier=full)

    with math:
        for k in lm.range(0, k_tiles):
            lm.wait(full, stage=k % 3)
            lm.mma(acc, sa[k % 3], sb[k % 3], init=(k == 0))
            lm.commit(empty, stage=k % 3)
        C.tma_store(acc.to(lm.bf16), coords=(m_tile, n_tile))
# Two 64-row warpgroups share M=128: one m64n256k16 per warpgroup per K step; A's second
# 64-row block starts 64 x 128 B = 8192 B into the stage. SW128 K-major wgmma descriptor:
# LBO 16 (field 1), SBO 1024 (field 64), layout 1 at bit 62 = 0x4000004000010000.
# CHECK:      "cake.tma_load"(%sa, %A, {{.*}}cake.box = array<i64: 128, 64>, cake.copies = 1 : i64, cake.copy_step = 0 : i64, cake.tx_bytes = 16384 : i64, cake.coords = ["k*64", "m_tile*128"], cake.tmap = 0 : i64}
# CHECK:      "cake.tma_load"(%sb, %B, {{.*}}cake.box = array<i64: 256, 64>, cake.copies = 1 : i64, cake.copy_step = 0 : i64, cake.tx_bytes = 32768 : i64, cake.coords = ["k*64", "n_tile*256"], cake.tmap = 0 : i64}
# CHECK:      "cake.mma"(%acc, {{.*}}cake.instr = "wgmma.m64n256k16.f32.bf16.bf16", cake.mma_shape = array<i64: 64, 256, 16>, cake.k_steps = 4 : i64, cake.a_desc = 4611686293305360384 : i64, cake.b_desc = 4611686293305360384 : i64, cake.warpgroups = 2 : i64, cake.a_koffsets = array<i64: 0, 32, 64, 96>, cake.b_koffsets = array<i64: 0, 32, 64, 96>, cake.a_moffsets = array<i64: 0, 8192>}
# CHECK:      "cake.tma_store"(%C, {{.*}}cake.box = array<i64: 128, 256>, cake.copies = 1 : i64, cake.copy_step = 0 : i64, cake.tx_bytes = 65536 : i64, cake.coords = ["n_tile*256", "m_tile*128"], cake.tmap = 0 : i64}
# CHECK:      }) {cake.target = "sm_90a", cake.block_threads = 384 : i64, cake.dynamic_smem = 147456 : i64, cake.smem_align_slack = 1008 : i64, cake.tmem_alloc = 0 : i64, {{.*}}cake.tmaps = [{tensor = "A", index = 0 : i64, dtype = "bf16", rank = 2 : i64, box = array<i64: 128, 64>, swizzle = "128b", interleave = "none", oob_fill = "zero", l2_promotion = "256b"}, {tensor = "B", index = 0 : i64, dtype = "bf16", rank = 2 : i64, box = array<i64: 256, 64>, swizzle = "128b", interleave = "none", oob_fill = "zero", l2_promotion = "256b"}, {tensor = "C", index = 0 : i64, dtype = "bf16", rank = 2 : i64, box = array<i64: 128, 256>, swizzle = "none", interleave = "none", oob_fill = "zero", l2_promotion = "256b"}]
