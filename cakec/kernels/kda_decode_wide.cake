# Kimi Delta Attention, decode, for many heads: kda_decode.cake's step (the same tensors, the
# same arithmetic and in-place semantics, the same load order; its header has them) with each
# CTA on a 64-column block of the values instead of 16, so one launch is 2 CTAs per head
# rather than 8.
#
# At small B·HV the 16-column kernel keeps more SMs busy. With thousands of heads the device
# is full either way, and a 64-column CTA keeps 32 KiB of state loads in flight (159
# registers, 3 CTAs per SM: 96 KiB per SM against the 16-column kernel's 7 × 8 KiB) and
# spreads the work every CTA repeats (the head's indices, k, q, g, β, two column reductions
# with two barriers each) over 4× the bytes. A thread holds 64 state elements, one 16-byte
# load and store per row and 16-column block (the quad layout, docs/language.md).
# Measured on the H200 before the loads were issued together (bench/kda_decode_widths.py,
# B = 256): 62-63 % of a copy against 60-61 % for 16 columns and 59-60 % for 32.
# No longer routed (kda_decode_ring.cake is faster from 2048 heads); the probes build on it.
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
        # Every load is issued before the first value that waits for one (the decay's exp):
        # the state first, g last, so the step costs one DRAM round trip, not one per input.
        s = S.load(coords=(bh, vb), shape=(128, 64), dtype=lm.f32)
        beta = Beta.load(coords=(bh,), shape=(1, 1), dtype=lm.f32)
        k = K.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        q = Q.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        v = V.load(coords=(bh, vb), shape=(1, 64), dtype=lm.bf16).to(lm.f32)
        decay = lm.exp(G.load(coords=(bh, 0), shape=(128, 1), dtype=lm.f32))
        s = s * decay
        u = beta * (v - (s * k).sum(axis=0))
        s = s + k * u
        O.store((s * (q * scale)).sum(axis=0).to(lm.bf16), coords=(bh, vb))
        Sn.store(s, coords=(bh, vb))
