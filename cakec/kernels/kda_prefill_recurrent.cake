# Kimi Delta Attention, prefill in the recurrent form: every token of a sequence in order,
# the state kept in registers from the first token to the last (never written to HBM between
# tokens; `Sn` is stored once, after the loop). Per value head hv (query/key head
# h = hv // (HV / H)) and token t, with S [128 keys, 128 values] f32:
#   S ← diag(exp g_t) S;  u = β_t (v_t − Sᵀ k_t);  S ← S + k_t uᵀ;  o_t = Sᵀ (scale · q_t)
# Tensors (cakec/kernels/kda.py builds these views of the [B, T, H(V), 128] inputs): Q, K
# [B·T·H, 128] bf16; V [B·T·HV, 128] bf16; G [B·T·HV, 128] f32; Beta [B·T·HV] f32;
# S0, Sn [B·HV·128, 128] f32 (initial and final state; S0 is read only when has_s0 = 1);
# O [B·T·HV, 128] bf16.
#
# Schedule: one CTA of one warpgroup per (sequence·head, 32-column block of the values), as
# kda_decode.cake, with the token loop inside: each token is a decode step on the register
# state (two column reductions, one rank-1 FMA update per element). It is exact for any T
# and is the chunked form's fallback (below); it is latency-bound (one token after
# another, two warp-combining syncs each), so it is slow for long sequences.
#
# The chunked form on wgmma is cakec/kernels/kda_prefill_chunked.cake (kda_prefill's default);
# this kernel is its fallback for decays too strong for the chunked form's scaled keys.
@cake.schedule(target="sm_90a")
def kda_prefill_recurrent(lm, Q: LM.tensor2d, K: LM.tensor2d, V: LM.tensor2d, G: LM.tensor2d,
                          Beta: LM.tensor1d, S0: LM.tensor2d, Sn: LM.tensor2d, O: LM.tensor2d,
                          BHV: LM.i32, T: LM.i32, HV: LM.i32, H: LM.i32, scale: LM.f32,
                          has_s0: LM.i32):
    lm.grid(BHV, 4)
    bh = lm.block_id(0)                       # b · HV + hv
    vb = lm.block_id(1)                       # which 32 values
    b = bh // HV
    h = (bh % HV) // (HV // H)
    step = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(128, 32), dtype=lm.f32, role=step)
    with step:
        if has_s0 == 1:
            s = S0.load(coords=(bh, vb), shape=(128, 32), dtype=lm.f32)
        else:
            s = 0.0
        for t in lm.range(0, T):
            qk = (b * T + t) * H + h          # row of q_t, k_t
            tv = (b * T + t) * HV + bh % HV   # row of v_t, g_t, β_t, o_t
            k = K.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
            q = Q.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
            decay = lm.exp(G.load(coords=(tv, 0), shape=(128, 1), dtype=lm.f32))
            v = V.load(coords=(tv, vb), shape=(1, 32), dtype=lm.bf16).to(lm.f32)
            beta = Beta.load(coords=(tv,), shape=(1, 1), dtype=lm.f32)
            s = s * decay
            u = beta * (v - (s * k).sum(axis=0))
            s = s + k * u
            O.store((s * (q * scale)).sum(axis=0).to(lm.bf16), coords=(tv, vb))
        Sn.store(s, coords=(bh, vb))
