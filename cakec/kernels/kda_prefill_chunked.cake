# Kimi Delta Attention, prefill in the chunked (UT-transform) form on wgmma: per value head
# hv (query/key head h = hv // (HV / H)), chunks of C = 64 tokens, with the state S [128 keys,
# 128 values] f32 kept in registers, transposed (Sᵀ: values × keys, two 64-row halves s0, s1),
# from the first chunk to the last: it is written to HBM once, after the chunk loop (`Sn`).
# The math (../shared/notes/KDA.md; float64 model with the same roundings:
# examples/kda/kda_prefill_chunked_model.py, checked on the CPU by
# test/unit/test_kda_chunked_model.py), per chunk, γ the within-chunk cumulative log2 decay
# and γ_C its last row:
#   K̃ = K ⊙ 2^(γ − γ_C/2), K̂ = K ⊙ 2^(γ_C/2 − γ)   (the half-decay reference keeps both in
#       f32 range while a chunk decays by less than 2·126 in log2; kda.py checks that)
#   L = diag(β) StrictTril(K̃ K̂ᵀ), M = Tril(s·Q ⊙ 2^(γ − γ_C/2) K̂ᵀ), A = (I + L)⁻¹
#   A' = A diag(β), W = A' (K ⊙ 2^γ), U = A' V − W S, O = (s·Q ⊙ 2^γ) S + M U,
#   S ← diag(2^γ_C) S + (K ⊙ 2^(γ_C − γ))ᵀ U.
# Tensors (cakec/kernels/kda.py passes these views of the [B, T, H(V), 128] inputs, no copy):
# Q, K [B, H, T, 128] bf16; V, O [B, HV, T, 128] bf16; G [B, HV, T, 128] f32; Beta [B, HV, T]
# f32; Lev [64, 64] i32 (the level table of the block inverse, below); S0, Sn [B·HV·128, 128]
# f32, the states transposed (S0 is read only when has_s0 = 1).
#
# Schedule: one CTA per (value head, sequence), two warpgroups.
# * prep (warps 0–3) computes everything that does not need the state, a chunk ahead of the
#   state role: γ by MMA (g·log2 e split into bf16 hi + lo halves, exact to 2^-16, times
#   0/1/±½ tiles built from index masks as register A); the decayed keys into SMEM; L and M
#   (64×64×128 wgmmas, the query side from registers); A by recursive block inversion: B
#   starts as I and B ← B − (mask_lv ∘ B·L)·B joins the inverses of 2^lv-row diagonal blocks
#   for lv = 0..5 (12 small wgmmas, mask_lv from `Lev`; its entries stay those of inverses,
#   where the doubling product (I − L)(I + L²)… grows combinatorially and fails on
#   correlated keys); then, once the state role has released the previous chunk's hand-off
#   (`free`), writes A', M, V, s·Q ⊙ 2^γ, K ⊙ 2^(γ_C − γ), −W and 2^γ_C into it (`ready`).
# * state (warps 4–7), on the running state, per half j of the values (64 of 128):
#   u_j = A'·V_j + (−W)·S_jᵀ (S staged bf16 in SMEM once per chunk), stored bf16; then
#   s_j ← s_j · 2^γ_C + u_jᵀ·K_r (wgmma into the loop-carried accumulator, both operands read
#   transposed) and o_j = Q̃·S_jᵀ + M·u_j, stored (a ragged last chunk masked); the staged copy
#   of S is rewritten only after the wgmmas that read it retired (CAKE-S041).
# All tiles of a role have 64 rows (sm_90a lays a role's tiles over one fragment count).
# No accumulator is touched while another wgmma of its role is in flight (the decays before
# both state updates, o1 stored before o0, M issued before L): ptxas would otherwise serialise
# every wgmma of the kernel (C7514; test/unit/test_wgmma_pipeline.py).
@cake.schedule(target="sm_90a")
def kda_prefill_chunked(lm, Q: LM.tensor4d, K: LM.tensor4d, V: LM.tensor4d, G: LM.tensor4d,
                        Beta: LM.tensor3d, Lev: LM.tensor2d, S0: LM.tensor2d, Sn: LM.tensor2d, O: LM.tensor4d,
                        B: LM.i32, T: LM.i32, HV: LM.i32, H: LM.i32, scale: LM.f32,
                        has_s0: LM.i32):
    lm.grid(HV, B)
    hv = lm.block_id(0)
    b = lm.block_id(1)
    h = hv // (HV // H)
    bhv = b * HV + hv
    chunks = lm.cdiv(T, 64)

    pool = lm.smem(214016)
    # prep-private
    sghi = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sglo = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skn = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skx = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sl = pool.view(offset=205824, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    # hand-off
    sa = pool.view(offset=73728, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sm = pool.view(offset=81920, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    snw = pool.view(offset=90112, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sv0 = pool.view(offset=106496, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sv1 = pool.view(offset=114688, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    skr = pool.view(offset=122880, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq0 = pool.view(offset=139264, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    # state
    ss0 = pool.view(offset=155648, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    ss1 = pool.view(offset=172032, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    su0 = pool.view(offset=188416, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    su1 = pool.view(offset=196608, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sdec = pool.view(offset=204800, shape=(1, 128), dtype=lm.f32, swizzle=None)

    prep = lm.role(warps=[0, 1, 2, 3])
    state = lm.role(warps=[4, 5, 6, 7])
    ready = lm.barrier(count=1, prod=[prep], cons=[state])
    free = lm.barrier(count=1, prod=[state], cons=[prep])

    gam = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    lacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    macc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    xacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    pacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    p = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    wacc = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    ghi = lm.regs(shape=(64, 128), dtype=lm.bf16, role=prep)

    s0 = lm.regs(shape=(64, 128), dtype=lm.f32, role=state)
    s1 = lm.regs(shape=(64, 128), dtype=lm.f32, role=state)
    u0 = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)
    u1 = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)
    o0 = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)
    o1 = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)

    with prep:
        for n in lm.range(0, chunks):
            # γ by MMA: g·log2(e) split into bf16 halves hi + lo (exact to 2^-16), each
            # multiplied by a 0/±1/±½ tile built from index masks (register A)
            ghi = (G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634).to(lm.bf16)
            sghi[0].store(ghi)
            sglo[0].store((G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634 - ghi.to(lm.f32)).to(lm.bf16))
            lm.fence_proxy()
            row = lm.row_index(lacc)
            col = lm.col_index(lacc)
            half = lm.where(col <= row, 0.5, -0.5).to(lm.bf16)
            lm.mma(gam, half, sghi[0].T, init=True)       # γ − γ_C/2
            lm.mma(gam, half, sglo[0].T)
            skn[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(-gam)).to(lm.bf16))
            skx[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
            lm.fence_proxy()
            lm.mma(macc, (Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16), skn[0], init=True)
            lm.mma(lacc, skx[0], skn[0], init=True)       # K̃ K̂ᵀ
            sl[0].store(lm.where(col < row, lacc * Beta.load(coords=(b, hv, n), shape=(64, 1), dtype=lm.f32), 0.0).to(lm.bf16))
            p = lm.where(col == row, 1.0, 0.0)             # B = (I + L)⁻¹ of 1-row blocks
            sx[0].store(p.to(lm.bf16))
            for lv in lm.range(0, 6):                      # blocks of 2^lv rows → 2^(lv+1)
                lm.fence_proxy()
                lm.mma(pacc, p.to(lm.bf16), sl[0].T, init=True)
                lm.mma(xacc, lm.where(Lev.load(coords=(0, 0), shape=(64, 64), dtype=lm.i32) == lv, pacc, 0.0).to(lm.bf16), sx[0].T, init=True)
                p = p - xacc
                sx[0].store(p.to(lm.bf16))
            # the hand-off, once the state role has released the previous chunk's
            lm.wait(free)
            sm[0].store(lm.where(col <= row, macc, 0.0).to(lm.bf16))
            sa[0].store((p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16))
            sv0[0].store(V.load(coords=(b, hv, n, 0), shape=(64, 64), dtype=lm.bf16))
            sv1[0].store(V.load(coords=(b, hv, n, 1), shape=(64, 64), dtype=lm.bf16))
            tri = lm.where(col <= row, 1.0, 0.0).to(lm.bf16)
            lm.mma(gam, tri, sghi[0].T, init=True)        # γ
            lm.mma(gam, tri, sglo[0].T)
            sq0[0].store((Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16))
            skx[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
            after = lm.where(col > row, 1.0, 0.0).to(lm.bf16)
            lm.mma(gam, after, sghi[0].T, init=True)      # γ_C − γ
            lm.mma(gam, after, sglo[0].T)
            skr[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
            sdec[0].store(lm.exp2((G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634).sum(axis=0)))
            lm.fence_proxy()
            lm.mma(wacc, (p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16), skx[0].T, init=True)
            snw[0].store((wacc * -1.0).to(lm.bf16))
            lm.fence_proxy()
            lm.arrive(ready)

    with state:
        if has_s0 == 1:
            s0 = S0.load(coords=(2 * bhv, 0), shape=(64, 128), dtype=lm.f32)
            s1 = S0.load(coords=(2 * bhv + 1, 0), shape=(64, 128), dtype=lm.f32)
        else:
            s0 = 0.0
            s1 = 0.0
        ss0[0].store(s0.to(lm.bf16))
        ss1[0].store(s1.to(lm.bf16))
        lm.fence_proxy()
        for n in lm.range(0, chunks):
            lm.wait(ready)
            lm.mma(u0, sa[0], sv0[0].T, init=True)
            lm.mma(u0, snw[0], ss0[0])
            lm.mma(u1, sa[0], sv1[0].T, init=True)
            lm.mma(u1, snw[0], ss1[0])
            su0[0].store(u0.to(lm.bf16))
            su1[0].store(u1.to(lm.bf16))
            lm.fence_proxy()
            s0 = s0 * sdec[0].load()
            s1 = s1 * sdec[0].load()
            lm.mma(s0, su0[0].T, skr[0].T)
            lm.mma(s1, su1[0].T, skr[0].T)
            lm.mma(o0, sq0[0], ss0[0], init=True)
            lm.mma(o0, sm[0], su0[0].T)
            lm.mma(o1, sq0[0], ss1[0], init=True)
            lm.mma(o1, sm[0], su1[0].T)
            O.store(o1.to(lm.bf16), coords=(b, hv, n, 1))
            O.store(o0.to(lm.bf16), coords=(b, hv, n, 0))
            lm.arrive(free)
            ss0[0].store(s0.to(lm.bf16))
            ss1[0].store(s1.to(lm.bf16))
            lm.fence_proxy()
        Sn.store(s0, coords=(2 * bhv, 0))
        Sn.store(s1, coords=(2 * bhv + 1, 0))
