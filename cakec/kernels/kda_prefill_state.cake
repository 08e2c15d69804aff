# Kimi Delta Attention, prefill in the chunked form split over the sequence, kernel 2 of 2:
# the state pass. kda_prefill_prep.cake has written every chunk's state-free tiles (WA, WM,
# WW, WQ, WK, WD: its header) for all chunks at once; this kernel runs the serial part, per
# chunk n on the running state, for one half of the 128 values (the state's value columns
# evolve independently, so the two halves run in two CTAs):
#   U_j = WA·V_j + WW·S_j,  O_j = WQ·S_j + WM·U_j,  S_j ← diag(WD) S_j + WKᵀ U_j
# with S_j [128 keys, 64 values] kept transposed (values × keys) in f32 registers from the
# segment's first chunk to its last: it is written to HBM once, after the chunk loop (`Sn`).
# Tensors (cakec/kernels/kda.py): V [B, T, HV·128] bf16 (the [B, T, HV, 128] input, read by
# TMA in 64-value column tiles 2·hv + j), O [B, HV, T, 128] bf16 (a view of the output), the
# workspace as kda_prefill_prep.cake writes it (read by TMA), S0, Sn [·, 128] f32 the states
# transposed, one 64-row tile per CTA: (segment·B·HV + b·HV + hv)·cols + j (S0 read only
# when has_s0 = 1).
#
# Segments (kda.py's split_launches): the state is linear in itself, so over a segment of
# chunks S_end = M·S_start + C, M the product of the chunks' transitions diag(WD) + WKᵀ·WW.
# A launch runs nseg segments of `seg` chunks (the last `tail`) from segment `first` in cols
# = 2 or 4 column groups j; j = 2, 3 compute M's halves (from the identity in S0, reading V
# past T, where TMA fills zeros, so U = WW·S; no O; idle in segment 0). One segment and cols
# = 2 is the plain state pass. Several: a first launch (cols = 4) gives C and M of every
# segment but the last (segment 0 from the real initial state, writing its O: out_segs = 1),
# the host chains the starts, a second launch (cols = 2) runs every segment but the first
# from its start: a sequence's segments run side by side, so few heads fill the GPU.
#
# Schedule: one CTA per (column group, value head, sequence and segment). A load warpgroup
# has chunk n's tiles (72 KiB, seven TMA copies) brought into a 2-stage ring while the state
# warpgroup works on chunk n − 1: per chunk five wgmmas (Q̃·S first, S decayed under the U
# MMAs) and two SMEM hand-offs (U, then the new S in bf16 for the next chunk, written once the
# wgmmas that read it retired, CAKE-S041, while M·U still runs), then O: its store is off the
# S chain.
@cake.schedule(target="sm_90a")
def kda_prefill_state(lm, V: LM.tma3d, WA: LM.tma2d, WM: LM.tma2d, WW: LM.tma2d,
                      WQ: LM.tma2d, WK: LM.tma2d, WD: LM.tma2d, S0: LM.tensor2d,
                      Sn: LM.tensor2d, O: LM.tensor4d, B: LM.i32, T: LM.i32, HV: LM.i32,
                      has_s0: LM.i32, cols: LM.i32, seg: LM.i32, tail: LM.i32, nseg: LM.i32,
                      first: LM.i32, out_segs: LM.i32):
    lm.grid(cols, HV, B * nseg)
    j = lm.block_id(0)
    hv = lm.block_id(1)
    b = lm.block_id(2) % B
    p = first + lm.block_id(2) // B            # the segment
    bhv = b * HV + hv
    tile = (lm.block_id(2) * HV + hv) * cols + j
    chunks = lm.cdiv(T, 64)
    n0 = p * seg
    half = j % 2
    basis = j // 2                             # 1: a column of M
    last = (lm.block_id(2) // B + 1) // nseg   # 1 in the launch's last segment: `tail` chunks
    count = (seg + (tail - seg) * last) * (1 - basis * (1 - lm.min(p, 1)))
    vskip = basis * chunks                     # M's columns read V's rows past T: zeros
    oskip = lm.min(basis + p // out_segs, 1) * chunks

    pool = lm.smem(173056)
    # the ring: chunk n0 + i in stage i % 2
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sm = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=32768, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    snw = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    skr = pool.view(offset=81920, shape=(64, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sq = pool.view(offset=114688, shape=(64, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sdec = pool.view(offset=172032, shape=(1, 128), dtype=lm.f32, stage=2, swizzle=None)
    # state-private
    ss = pool.view(offset=147456, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    su = pool.view(offset=163840, shape=(64, 64), dtype=lm.bf16, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3])
    state = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[state], init_count=7, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[state], cons=[load], pipeline=pipe)

    s = lm.regs(shape=(64, 128), dtype=lm.f32, role=state)
    u = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)
    o = lm.regs(shape=(64, 64), dtype=lm.f32, role=state)

    with load:
        for i in lm.range(0, count):
            st = i % 2
            r = bhv * chunks + n0 + i
            lm.wait(empty, stage=st)
            sa.tma_load(WA, coords=(r, 0), stage=st, barrier=full)
            sm.tma_load(WM, coords=(r, 0), stage=st, barrier=full)
            sv.tma_load(V, coords=(b, n0 + i + vskip, 2 * hv + half), stage=st, barrier=full)
            snw.tma_load(WW, coords=(r, 0), stage=st, barrier=full)
            skr.tma_load(WK, coords=(r, 0), stage=st, barrier=full)
            sq.tma_load(WQ, coords=(r, 0), stage=st, barrier=full)
            sdec.tma_load(WD, coords=(r, 0), stage=st, barrier=full)

    with state:
        if has_s0 == 1:
            s = S0.load(coords=(tile, 0), shape=(64, 128), dtype=lm.f32)
        else:
            s = 0.0
        ss[0].store(s.to(lm.bf16))
        lm.fence_proxy()
        for i in lm.range(0, count):
            st = i % 2
            lm.wait(full, stage=st)
            lm.mma(o, sq[st], ss[0], init=True)        # Q̃·S before S changes
            lm.mma(u, sa[st], sv[st].T, init=True)
            lm.mma(u, snw[st], ss[0])
            s = s * sdec[st].load()                    # under the MMAs (they read ss)
            su[0].store(u.to(lm.bf16))
            lm.fence_proxy()
            lm.mma(s, su[0].T, skr[st].T)
            lm.mma(o, sm[st], su[0].T)
            ss[0].store(s.to(lm.bf16))                 # the o MMA still runs under it
            lm.fence_proxy()
            O.store(o.to(lm.bf16), coords=(b, hv, n0 + i + oskip, half))
            lm.arrive(empty, stage=st)
        Sn.store(s, coords=(tile, 0))
