# Kimi Delta Attention, prefill in the chunked form split over the sequence, kernel 1 of 2:
# everything of a chunk that does not need the running state, for every chunk of every
# sequence and value head at once (one CTA each), written to a bf16 workspace in HBM that
# kda_prefill_state.cake then reads chunk after chunk beside the state it keeps on chip. The
# math is kda_prefill_chunked.cake's prep role (its header has it), per chunk n of 64 tokens:
#   WA = A diag(β) with A = (I + L)⁻¹ by block inversion, WM = Tril(M),
#   WW = −A diag(β) (K ⊙ 2^γ), WQ = s·Q ⊙ 2^γ, WK = K ⊙ 2^(γ_C − γ), WD = 2^γ_C.
# Tensors (cakec/kernels/kda.py): Q, K [B, H, T, 128] bf16 and G [B, HV, T, 128] f32 (views
# of the [B, T, H(V), 128] inputs), Beta [B, HV, T] f32, Lev [64, 64] i32 (the level table
# of the block inverse); the workspace rows are (b·HV + hv)·64·chunks + 64·n + i: WA, WM
# [·, 64], WW, WQ, WK [·, 128] bf16, and WD [B·HV·chunks, 128] f32 (one row per chunk).
# Rows past T read zeros (k = 0, g = 0): a ragged last chunk adds nothing to the state.
#
# Schedule: one warpgroup per CTA, 112.5 KiB of SMEM (two CTAs, 227 KiB, share an SM's
# 228); B·HV·⌈T/64⌉ CTAs fill the machine at every shape of bench/kda.py. γ is one MMA pair
# (γ − γ_C/2); γ and γ_C − γ follow from it and the broadcast γ_C/2 (sgc), so every γ-scaled
# tile is written to SMEM in one pass and none stays live in registers across an MMA.
# The workspace tiles leave by TMA from views whose MMA has retired (sghi, sglo, sx, sl): a
# bounds-checked register store costs ~10 instructions a column pair, a TMA store one thread.
@cake.schedule(target="sm_90a")
def kda_prefill_prep(lm, Q: LM.tensor4d, K: LM.tensor4d, G: LM.tensor4d, Beta: LM.tensor3d,
                     Lev: LM.tensor2d, WA: LM.tma2d, WM: LM.tma2d, WW: LM.tma2d,
                     WQ: LM.tma2d, WK: LM.tma2d, WD: LM.tensor2d, B: LM.i32, T: LM.i32, HV: LM.i32,
                     H: LM.i32, scale: LM.f32):
    chunks = lm.cdiv(T, 64)
    lm.grid(chunks, HV, B)
    n = lm.block_id(0)
    hv = lm.block_id(1)
    b = lm.block_id(2)
    h = hv // (HV // H)
    r = (b * HV + hv) * chunks + n             # the chunk's row tile in the workspace

    pool = lm.smem(115200)
    sghi = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sglo = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skn = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skx = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sl = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=73728, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    skg = pool.view(offset=81920, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq = pool.view(offset=98304, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sgc = pool.view(offset=114688, shape=(1, 128), dtype=lm.f32, swizzle=None)

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
        # γ − γ_C/2 by MMA: g·log2(e) split into bf16 halves hi + lo (exact to 2^-16), each
        # multiplied by a ±½ tile built from index masks (register A)
        gl = G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634
        ghi = gl.to(lm.bf16)
        sghi[0].store(ghi)
        sglo[0].store((gl - ghi.to(lm.f32)).to(lm.bf16))
        sgc[0].store(gl.sum(axis=0) * 0.5)             # γ_C/2, read back broadcast per column
        lm.fence_proxy()
        WD.store(lm.exp2(sgc[0].load() * 2.0), coords=(r, 0))
        row = lm.row_index(lacc)
        col = lm.col_index(lacc)
        half = lm.where(col <= row, 0.5, -0.5).to(lm.bf16)
        lm.mma(gam, half, sghi[0].T, init=True)       # γ − γ_C/2
        lm.mma(gam, half, sglo[0].T)
        kt = K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16)
        skn[0].store((kt.to(lm.f32) * lm.exp2(-gam)).to(lm.bf16))
        skx[0].store((kt.to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
        # WK, WQ staged where the γ halves were (their MMA retired), K ⊙ 2^γ for WW's MMA: K's
        # tiles, then Q's (one of them live at a time: no spills); γ dies before the MMAs. No
        # tile is scaled beyond 2^(|γ_C|/2), the range CHUNK_DECAY_MIN keeps finite
        sghi[0].store((kt.to(lm.f32) * lm.exp2(sgc[0].load() - gam)).to(lm.bf16))   # WK: γ_C − γ
        skg[0].store((kt.to(lm.f32) * lm.exp2(gam + sgc[0].load())).to(lm.bf16))   # K ⊙ 2^γ
        qt = Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16)
        sq[0].store((qt.to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16))
        sglo[0].store((qt.to(lm.f32) * lm.exp2(gam + sgc[0].load()) * scale).to(lm.bf16))  # WQ
        lm.fence_proxy()
        WK.tma_store(sghi[0], coords=(r, 0))
        WQ.tma_store(sglo[0], coords=(r, 0))
        lm.mma(macc, sq[0], skn[0], init=True)         # Q̃ K̂ᵀ
        lm.mma(lacc, skx[0], skn[0], init=True)       # K̃ K̂ᵀ
        sl[0].store(lm.where(col < row, lacc * Beta.load(coords=(b, hv, n), shape=(64, 1), dtype=lm.f32), 0.0).to(lm.bf16))
        sx[0].store(lm.where(col <= row, macc, 0.0).to(lm.bf16))    # WM, staged
        lm.fence_proxy()
        WM.tma_store(sx[0], coords=(r, 0))
        lev = Lev.load(coords=(0, 0), shape=(64, 64), dtype=lm.i32)
        p = lm.where(col == row, 1.0, 0.0)             # B = (I + L)⁻¹ of 1-row blocks
        sx[0].store(p.to(lm.bf16))
        for lv in lm.range(0, 6):                      # blocks of 2^lv rows → 2^(lv+1)
            lm.fence_proxy()
            lm.mma(pacc, p.to(lm.bf16), sl[0].T, init=True)
            lm.mma(xacc, lm.where(lev == lv, pacc, 0.0).to(lm.bf16), sx[0].T, init=True)
            p = p - xacc
            sx[0].store(p.to(lm.bf16))
        sl[0].store((p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16))
        lm.fence_proxy()                               # WA: the last MMA's A and a TMA store
        WA.tma_store(sl[0], coords=(r, 0))
        lm.mma(wacc, sl[0], skg[0].T, init=True)
        sghi[0].store((wacc * -1.0).to(lm.bf16))
        lm.fence_proxy()
        WW.tma_store(sghi[0], coords=(r, 0))
