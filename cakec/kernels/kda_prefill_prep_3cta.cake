# Kimi Delta Attention, prefill prep at three CTAs an SM: examples/kda/kda_prefill_prep.cake
# (its header has the math and the workspace) in 72 KiB of SMEM instead of 80, with
# `blocks_per_sm=3` (ptxas 13.0: 168 registers instead of 255, 656 B of spill stores and 976 B
# of loads a thread), so that a third warp per scheduler covers the dependent chain of each
# chunk's warpgroup — 92 serialized k-steps and six inverse levels. The inverse's tile `sx`
# (8 KiB) reuses the bytes of `skn` (16 KiB), dead once K̃ K̂ᵀ has read it: its last reader is
# the MMA into `lacc`, retired when the store of `sl` reads `lacc`, before the first store into
# `sx`; nothing reads `skn` after. The safety gate checks exactly that (`reuses=`,
# docs/language.md; CAKE-S061 otherwise). A candidate behind kda_prefill_launch.PREP_3CTA
# (off); bench/kda_prep_ab.py measures it against the shipped prep.
@cake.schedule(target="sm_90a", blocks_per_sm=3)
def kda_prefill_prep_3cta(lm, Q: LM.tensor4d, K: LM.tensor4d, G: LM.tensor4d, Beta: LM.tensor3d,
                     Lev: LM.tensor2d, WA: LM.tensor2d, WM: LM.tensor2d, WW: LM.tensor2d,
                     WQ: LM.tensor2d, WK: LM.tensor2d, WD: LM.tensor2d, B: LM.i32, T: LM.i32, HV: LM.i32,
                     H: LM.i32, scale: LM.f32):
    chunks = lm.cdiv(T, 64)
    lm.grid(chunks, HV, B)
    n = lm.block_id(0)
    hv = lm.block_id(1)
    b = lm.block_id(2)
    h = hv // (HV // H)
    r = (b * HV + hv) * chunks + n             # the chunk's row tile in the workspace

    pool = lm.smem(73728)
    sghi = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sglo = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skn = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skx = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sl = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    # the inverse's tile, in the first half of `skn`: `skn` is dead before `sx` is written
    sx = pool.view(offset=32768, shape=(64, 64), dtype=lm.bf16, swizzle=128b, reuses=skn)

    prep = lm.role(warps=[0, 1, 2, 3])
    gam = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    lacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    macc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    xacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    pacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    p = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    wacc = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    ghi = lm.regs(shape=(64, 128), dtype=lm.bf16, role=prep)
    # each input tile read from HBM once (a tile load is a bounds-checked read per element)
    gl = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    kt = lm.regs(shape=(64, 128), dtype=lm.bf16, role=prep)
    qt = lm.regs(shape=(64, 128), dtype=lm.bf16, role=prep)
    lev = lm.regs(shape=(64, 64), dtype=lm.i32, role=prep)

    with prep:
        # γ by MMA: g·log2(e) split into bf16 halves hi + lo (exact to 2^-16), each
        # multiplied by a 0/±1/±½ tile built from index masks (register A)
        gl = G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634
        ghi = gl.to(lm.bf16)
        sghi[0].store(ghi)
        sglo[0].store((gl - ghi.to(lm.f32)).to(lm.bf16))
        WD.store(lm.exp2(gl.sum(axis=0)), coords=(r, 0))
        lm.fence_proxy()
        row = lm.row_index(lacc)
        col = lm.col_index(lacc)
        half = lm.where(col <= row, 0.5, -0.5).to(lm.bf16)
        lm.mma(gam, half, sghi[0].T, init=True)       # γ − γ_C/2
        lm.mma(gam, half, sglo[0].T)
        kt = K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16)
        qt = Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16)
        skn[0].store((kt.to(lm.f32) * lm.exp2(-gam)).to(lm.bf16))
        skx[0].store((kt.to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(macc, (qt.to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16), skn[0], init=True)
        lm.mma(lacc, skx[0], skn[0], init=True)       # K̃ K̂ᵀ
        sl[0].store(lm.where(col < row, lacc * Beta.load(coords=(b, hv, n), shape=(64, 1), dtype=lm.f32), 0.0).to(lm.bf16))
        WM.store(lm.where(col <= row, macc, 0.0).to(lm.bf16), coords=(r, 0))
        # the rest of the γ-scaled tiles, so that only the inverse's tiles live in its loop
        tri = lm.where(col <= row, 1.0, 0.0).to(lm.bf16)
        lm.mma(gam, tri, sghi[0].T, init=True)        # γ
        lm.mma(gam, tri, sglo[0].T)
        WQ.store((qt.to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16), coords=(r, 0))
        skx[0].store((kt.to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
        after = lm.where(col > row, 1.0, 0.0).to(lm.bf16)
        lm.mma(gam, after, sghi[0].T, init=True)      # γ_C − γ
        lm.mma(gam, after, sglo[0].T)
        WK.store((kt.to(lm.f32) * lm.exp2(gam)).to(lm.bf16), coords=(r, 0))
        lm.fence_proxy()                               # skx for the last MMA
        lev = Lev.load(coords=(0, 0), shape=(64, 64), dtype=lm.i32)
        p = lm.where(col == row, 1.0, 0.0)             # B = (I + L)⁻¹ of 1-row blocks
        sx[0].store(p.to(lm.bf16))
        for lv in lm.range(0, 6):                      # blocks of 2^lv rows → 2^(lv+1)
            lm.fence_proxy()
            lm.mma(pacc, p.to(lm.bf16), sl[0].T, init=True)
            lm.mma(xacc, lm.where(lev == lv, pacc, 0.0).to(lm.bf16), sx[0].T, init=True)
            p = p - xacc
            sx[0].store(p.to(lm.bf16))
        WA.store((p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16), coords=(r, 0))
        lm.mma(wacc, (p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16), skx[0].T, init=True)
        WW.store((wacc * -1.0).to(lm.bf16), coords=(r, 0))
