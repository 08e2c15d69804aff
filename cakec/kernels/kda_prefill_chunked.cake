@cake.schedule(target="sm_90a")
def kda_prefill_chunked(lm, Q: LM.tensor4d, K: LM.tensor4d, V: LM.tensor4d, G: LM.tensor4d,
                        Beta: LM.tensor3d, S0: LM.tensor2d, Sn: LM.tensor2d, O: LM.tensor4d,
                        B: LM.i32, T: LM.i32, HV: LM.i32, H: LM.i32, scale: LM.f32,
                        has_s0: LM.i32):
    lm.grid(HV, B)
    hv = lm.block_id(0)
    b = lm.block_id(1)
    h = hv // (HV // H)
    bhv = b * HV + hv
    chunks = lm.cdiv(T, 64)

    pool = lm.smem(205312)
    # prep-private
    sghi = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sglo = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skn = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sk0 = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sx = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    # hand-off
    sa = pool.view(offset=73728, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    sm = pool.view(offset=81920, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    snw = pool.view(offset=90112, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sv = pool.view(offset=106496, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    skr = pool.view(offset=122880, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sq0 = pool.view(offset=139264, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    # state
    ss = pool.view(offset=155648, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    su = pool.view(offset=188416, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    sdec = pool.view(offset=204800, shape=(1, 128), dtype=lm.f32, swizzle=None)

    prep = lm.role(warps=[0, 1, 2, 3], regs=232)
    state = lm.role(warps=[4, 5, 6, 7], regs=232)
    ready = lm.barrier(count=1, prod=[prep], cons=[state])
    free = lm.barrier(count=1, prod=[state], cons=[prep])

    gam = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    ref = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    lacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    macc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    xacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    pacc = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    x = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    p = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    half = lm.regs(shape=(64, 64), dtype=lm.f32, role=prep)
    wacc = lm.regs(shape=(64, 128), dtype=lm.f32, role=prep)
    ghi = lm.regs(shape=(64, 128), dtype=lm.bf16, role=prep)

    s = lm.regs(shape=(128, 128), dtype=lm.f32, role=state)
    uacc = lm.regs(shape=(64, 128), dtype=lm.f32, role=state)
    oacc = lm.regs(shape=(64, 128), dtype=lm.f32, role=state)

    with prep:
        half = 0.5
        for n in lm.range(0, chunks):
            ghi = (G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634).to(lm.bf16)
            sghi[0].store(ghi)
            sglo[0].store((G.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.f32) * 1.4426950408889634 - ghi.to(lm.f32)).to(lm.bf16))
            lm.fence_proxy()
            tri = lm.where(lm.col_index(lacc) <= lm.row_index(lacc), 1.0, 0.0).to(lm.bf16)
            lm.mma(gam, tri, sghi[0].T, init=True)
            lm.mma(gam, tri, sglo[0].T)
            lm.mma(ref, half.to(lm.bf16), sghi[0].T, init=True)
            lm.mma(ref, half.to(lm.bf16), sglo[0].T)
            skn[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(ref - gam)).to(lm.bf16))
            sk0[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam)).to(lm.bf16))
            lm.fence_proxy()
            lm.mma(lacc, (K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam - ref)).to(lm.bf16), skn[0], init=True)
            lm.mma(macc, (Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam - ref) * scale).to(lm.bf16), skn[0], init=True)
            row = lm.row_index(lacc)
            col = lm.col_index(lacc)
            x = lm.where(col < row, lacc * Beta.load(coords=(b, hv, n), shape=(64, 1), dtype=lm.f32), 0.0)
            p = lm.where(col == row, 1.0, 0.0) - x
            sx[0].store(x.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(xacc, x.to(lm.bf16), sx[0].T, init=True)
            x = xacc
            sx[0].store(x.to(lm.bf16))
            for i in lm.range(0, 5):
                lm.fence_proxy()
                lm.mma(pacc, p.to(lm.bf16), sx[0].T, init=True)
                lm.mma(xacc, x.to(lm.bf16), sx[0].T, init=True)
                p = p + pacc
                x = xacc
                sx[0].store(x.to(lm.bf16))
            lm.wait(free)
            sa[0].store((p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16))
            sm[0].store(lm.where(col <= row, macc, 0.0).to(lm.bf16))
            sv[0].store(V.load(coords=(b, hv, n, 0), shape=(64, 128), dtype=lm.bf16))
            lm.mma(gam, tri, sghi[0].T, init=True)
            lm.mma(gam, tri, sglo[0].T)
            lm.mma(ref, half.to(lm.bf16), sghi[0].T, init=True)
            lm.mma(ref, half.to(lm.bf16), sglo[0].T)
            sq0[0].store((Q.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(gam) * scale).to(lm.bf16))
            skr[0].store((K.load(coords=(b, h, n, 0), shape=(64, 128), dtype=lm.bf16).to(lm.f32) * lm.exp2(ref * 2.0 - gam)).to(lm.bf16))
            sdec[0].store(lm.exp2(ref.max(axis=0) * 2.0))
            lm.mma(wacc, (p * Beta.load(coords=(b, hv, n), shape=(1, 64), dtype=lm.f32)).to(lm.bf16), sk0[0].T, init=True)
            snw[0].store((wacc * -1.0).to(lm.bf16))
            lm.fence_proxy()
            lm.arrive(ready)

    with state:
        if has_s0 == 1:
            s = S0.load(coords=(bhv, 0), shape=(128, 128), dtype=lm.f32)
        else:
            s = 0.0
        ss[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        for n in lm.range(0, chunks):
            lm.wait(ready)
            lm.mma(uacc, sa[0], sv[0].T, init=True)
            lm.mma(uacc, snw[0], ss[0])
            su[0].store(uacc.to(lm.bf16))
            lm.fence_proxy()
            s = s * sdec[0].load()
            lm.mma(s, su[0].T, skr[0].T)
            lm.mma(oacc, sq0[0], ss[0], init=True)
            lm.mma(oacc, sm[0], su[0].T)
            O.store(oacc.to(lm.bf16), coords=(b, hv, n, 0))
            lm.arrive(free)
            ss[0].store(s.to(lm.bf16))
            lm.fence_proxy()
        Sn.store(s, coords=(bhv, 0))
