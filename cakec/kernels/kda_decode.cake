# Kimi Delta Attention, decode: one new token per sequence against a recurrent state kept in
# HBM. Per sequence b and value head hv (query/key head h = hv // G, G = HV / H), with the
# state S [128 keys, 128 values] f32, key k, query q (bf16, 128), value v (bf16, 128),
# log-decay g (f32 ≤ 0, 128, one per key channel) and the scalar β:
#   S ← diag(exp g) S;  u = β (v − Sᵀ k);  S ← S + k uᵀ;  o = Sᵀ (scale · q)
# (fla's `naive_recurrent_kda` for T = 1). Tensors (examples/kda/kda_decode.py builds these
# views of the [B, 1, H(V), 128] inputs): Q, K [B·H, 128] bf16; V [B·HV, 128] bf16;
# G [B·HV, 128] f32; Beta [B·HV] f32; S [B·HV·128, 128] f32, the state read, and Sn (same
# shape) the state written: the same tensor for an update in place (each CTA reads its whole
# block of S before it writes that block of Sn, and no CTA touches another's); O [B·HV, 128]
# bf16.
#
# Schedule (memory-bound: 64 KiB of state in and out per head, a few FLOPs per element):
# * one CTA of one warpgroup per (sequence·head, 16-column block of the values): columns of S
#   are independent (u and o of column j read only column j), so splitting them gives 8× the
#   CTAs at small batch and leaves a thread 16 state elements (72 registers: 7 CTAs per SM
#   keep loads in flight; measured on the H200 at B = 256: 64 columns took 244 registers,
#   2 CTAs per SM, 35 % of a copy; 32 columns 128 registers, 4 CTAs, 46 %; 16 columns with
#   the head index fastest in the grid, 46 % too: a row's 512 bytes were read 64 at a time,
#   far apart in time);
# * the column block is the fastest-varying CTA index, so the 8 CTAs of one head run
#   together and each 512-byte state row is fetched whole from DRAM (46 % → 50 % of a copy);
# * the role has no MMA, so its tiles take the quad layout (docs/language.md): the block of S
#   is loaded into registers four columns per 16-byte load (`s = S.load(...)`; 57 % → 61 % of
#   a copy at B = 256, with 16, 32 or 64 columns per CTA alike), decayed in place, and both
#   Sᵀ k and Sᵀ q are column reductions (`axis=0`): each thread's 4 rows, then shuffles over
#   the 8 lanes sharing its columns, then the 4 warps through 256 B of SMEM; the rank-1
#   update is one FMA per element, evaluated as it is assigned;
# * every load is issued before the first value that waits for one: S first, g last (its
#   exp is the first wait), and the vectors read by plain loads when the run lies inside
#   (vector loads under per-element bounds tests compiled to a branch each, and each branch
#   waited for its load: at 61 % a CTA took one DRAM round trip for g, four for v's 16
#   values one after another, then S's; fla's fused_recurrent_kda, at ≈ 96 %, takes one);
# * k, q, g are (128, 1) vectors (4 registers a thread), v and the outputs (1, 16) vectors.
@cake.schedule(target="sm_90a")
def kda_decode(lm, Q: LM.tensor2d, K: LM.tensor2d, V: LM.tensor2d, G: LM.tensor2d,
               Beta: LM.tensor1d, S: LM.tensor2d, Sn: LM.tensor2d, O: LM.tensor2d, BHV: LM.i32,
               HV: LM.i32,
               H: LM.i32, scale: LM.f32):
    lm.grid(BHV * 8)
    bh = lm.block_id(0) // 8                  # b · HV + hv
    vb = lm.block_id(0) % 8                   # which 16 values: a head's 8 blocks are
                                              # neighbours, so its state rows are read whole
    qk = bh // (HV // H)                      # (bh // HV) · H + (bh % HV) // (HV // H)
    step = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(128, 16), dtype=lm.f32, role=step)
    with step:
        # Every load is issued before the first value that waits for one (the decay's exp):
        # the state first, g last, so the step costs one DRAM round trip, not one per input.
        s = S.load(coords=(bh, vb), shape=(128, 16), dtype=lm.f32)
        beta = Beta.load(coords=(bh,), shape=(1, 1), dtype=lm.f32)
        k = K.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        q = Q.load(coords=(qk, 0), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        v = V.load(coords=(bh, vb), shape=(1, 16), dtype=lm.bf16).to(lm.f32)
        decay = lm.exp(G.load(coords=(bh, 0), shape=(128, 1), dtype=lm.f32))
        s = s * decay
        u = beta * (v - (s * k).sum(axis=0))
        s = s + k * u
        O.store((s * (q * scale)).sum(axis=0).to(lm.bf16), coords=(bh, vb))
        Sn.store(s, coords=(bh, vb))
