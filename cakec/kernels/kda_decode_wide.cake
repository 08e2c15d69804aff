# Kimi Delta Attention, decode, for many heads: kda_decode.cake's step (the same tensors, the
# same arithmetic and in-place semantics; its header has them) with each CTA on a 64-column
# block of the values instead of 16, so one launch is 2 CTAs per head rather than 8.
#
# At small B·HV the 16-column kernel wins: the step is launch- and latency-bound, and 8 CTAs
# per head spread it over more SMs. With thousands of heads the device is full either way,
# and what decides the rate is the work each CTA repeats whatever its width (the head's
# index arithmetic, loading k, q, g, β and v, two column reductions through SMEM, each with
# two barriers): at 64 columns a thread holds 64 state elements (4 rows × 16 columns, one
# 16-byte load and store per row and 16-column block: the role has no MMA, so its tiles take
# the quad layout, docs/language.md) and that fixed work is spread over 4× the bytes.
# cakec.kernels.kda.kda_decode picks this kernel from DECODE_WIDE_MIN_HEADS heads up
# (bench/kda_decode_widths.py measures both, and a 32-column form, side by side).
@cake.schedule(target="sm_90a")
def kda_decode_wide(lm, Q: LM.tensor2d, K: LM.tensor2d, V: LM.tensor2d, G: LM.tensor2d,
               Beta: LM.tensor1d, S: LM.tensor2d, Sn: LM.tensor2d, O: LM.tensor2d, BHV: LM.i32,
               HV: LM.i32,
               H: LM.i32, scale: LM.f32):
    lm.grid(BHV * 2)
    bh = lm.block_id(0) // 2                  # b · HV + hv
    vb = lm.block_id(0) % 2                   # which 64 values: a head's 2 blocks are
                                              # neighbours, so its state rows are read whole
    qk = (bh // HV) * H + (bh % HV) // (HV // H)
    step = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(128, 64), dtype=lm.f32, role=step)
    with step:
        k = K.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        q = Q.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        decay = lm.exp(G.load(coords=(bh, 0), shape=(128, 1), dtype=lm.f32))
        v = V.load(coords=(bh, vb), shape=(1, 64), dtype=lm.bf16).to(lm.f32)
        beta = Beta.load(coords=(bh,), shape=(1, 1), dtype=lm.f32)
        s = S.load(coords=(bh, vb), shape=(128, 64), dtype=lm.f32)
        s = s * decay
        u = beta * (v - (s * k).sum(axis=0))
        s = s + k * u
        O.store((s * (q * scale)).sum(axis=0).to(lm.bf16), coords=(bh, vb))
        Sn.store(s, coords=(bh, vb))
