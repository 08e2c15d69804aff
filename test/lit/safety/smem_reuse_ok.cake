# `sx` takes the first half of `sk`'s bytes (`reuses=sk`): the MMA that reads `sk` is
# retired when the store into `sx` reads its accumulator `s`, and nothing reads `sk` after.
# The ledger shows the shared bytes and the live ranges; the emitted view is an offset.
# RUN: cakec verify %s
# RUN: cakec inspect %s | filecheck --check-prefix=LEDGER %s
# RUN: cakec emit %s --emit cuda | filecheck --check-prefix=CUDA %s
@cake.schedule(target="sm_90a")
def reuse(lm, Q: LM.tensor2d, K: LM.tensor2d, O: LM.tensor2d):
    pool = lm.smem(32768)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=sk)
    math = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        sk[0].store(K.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        sq[0].store(Q.load(coords=(0, 0), shape=(64, 128), dtype=lm.bf16))
        lm.fence_proxy()
        lm.mma(s, sq[0], sk[0], init=True)
        sx[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(o, s.to(lm.bf16), sx[0].T, init=True)
        O.store(o.to(lm.bf16), coords=(0, 0))
# LEDGER: "name": "sk",
# LEDGER: "live_lines": [17, 20]
# LEDGER: "name": "sx",
# LEDGER-NEXT: "line": 12,
# LEDGER-NEXT: "offset": 0,
# LEDGER-NEXT: "stage_bytes": 8192,
# LEDGER: "reuses": "sk",
# LEDGER-NEXT: "live_lines": [21, 23]
# CUDA: const u32 sk = cake_smem + 0u;  // 1 x 16384 B, swizzle 128b
# CUDA: const u32 sx = cake_smem + 0u;  // 1 x 8192 B, swizzle 128b
# The store into `sx` retires the wgmma that reads `sk` (the same bytes), not only those of `sx`:
# CUDA: smem_reuse_ok.cake:21: sx[0].store(s.to(lm.bf16))
# CUDA-NEXT: cake_wgmma_wait<0>();  // no wgmma of this role still reads the view
