# Attention forward (FlashAttention-style) on Hopper, head dim 128:
#   O = softmax(Q·Kᵀ·scale [+ causal mask])·V, lse = the row logsumexp (natural log, f32),
# for Q [B, S_q, H·D], K [B, S_k, H_kv·D] and Vt [B, H_kv·D, S_k'] (V transposed, S_k' = S_k
# rounded up to 8; examples/attention/fmha_fwd_sm90.py builds it), O [B·S_q', H·D] bf16
# (S_q' = S_q rounded up to 128: each batch's rows start at a whole tile, so the last tile's
# rows past S_q land in its own padding; `fmha` returns the [:, :S_q] view), Lse [B·H, S_q]. Query head h reads KV head h // G (grouped-query attention).
#
# Schedule:
# * one CTA per (128-query tile, head, batch); a producer warpgroup whose elected thread
#   loads the Q tile once and streams K and Vᵀ tiles of 128 keys through 2-stage rings, K and
#   V on their own barriers both ways, so S = Q·Kᵀ starts before V has landed and K goes back
#   as soon as S has retired;
# * two consumer warpgroups, 64 query rows each: S = Q·Kᵀ by wgmma from SMEM into f32
#   registers; the online softmax in the log2 domain (the scale and log2(e) folded into one
#   FMA per element, exp2 as ex2.approx, row max and sum by quad shuffles); P converted to
#   bf16 in registers and used as the A operand of the P·V wgmma (no SMEM round trip);
# * intra-warpgroup overlap (FA3's two-stage pipeline): block j issues S_j, then the P·V of
#   block j − 1 behind it, and runs the softmax of S_j while that wgmma executes; O is
#   rescaled by α = 2^(m_old − m_new) once it has retired; the last block's P·V follows the
#   loop. The carried f32 P costs 64 registers per thread: within the consumers' 232
#   (setmaxnreg) but for 32 bytes of spills (the form without the overlap: 532 vs 596 TFLOP/s
#   at S = 16k on the H200);
# * causal (bottom-right aligned: query i sees keys j ≤ i + S_k − S_q): the KV blocks wholly
#   above the diagonal are never loaded; masks (causal diagonal, the key tail) are index
#   comparisons, evaluated only on the blocks that hold the key tail or cross the diagonal
#   (on every block they would cost as much as the softmax: 401 vs 532 TFLOP/s at S = 16k for
#   the unpipelined form on the H200); a row that sees no key keeps m = −inf, so its P and α are 0, O = 0 and
#   lse = −inf, never NaN;
# * O normalised by the row sum and stored (whole tiles, into the padded rows), lse bounds-checked.
@cake.schedule(target="sm_90a")
def fmha_fwd_sm90(lm, Q: LM.tma3d, K: LM.tma3d, Vt: LM.tma3d, O: LM.tensor2d,
                  Lse: LM.tensor2d, B: LM.i32, Sq: LM.i32, Sk: LM.i32, H: LM.i32, G: LM.i32,
                  scale_log2: LM.f32, causal: LM.i32):
    tiles_m = lm.cdiv(Sq, 128)
    lm.grid(tiles_m, H, B)
    mt = lm.block_id(0)
    h = lm.block_id(1)
    b = lm.block_id(2)
    kv_blocks = lm.cdiv(Sk, 128)
    diag = mt * 128 + Sk - Sq                 # the last key row 0 of this tile sees
    last = diag if causal == 1 else Sk        # (non-causal: the key tail only)
    seen = lm.max(lm.min(kv_blocks, lm.cdiv(diag + 128, 128)), 0)
    # ≥ 1 block: a tile that sees no key still runs one, fully masked, so O is written (0).
    n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)

    pool = lm.smem(163840)                    # Q 32 KiB + 2 × K 32 KiB + 2 × Vᵀ 32 KiB
    sq = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sk = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=98304, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=1, prod=[load], cons=[math])
    k_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    v_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    k_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    v_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)

    s_acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    o_acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p_i = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)   # P of the block before
    m_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)     # running max, log2 domain
    l_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)     # running sum of P

    with load:
        sq.tma_load(Q, coords=(b, mt, h), barrier=q_full)
        for j in lm.range(0, n_blocks):
            s = j % 2
            lm.wait(k_empty, stage=s)
            sk.tma_load(K, coords=(b, j, h // G), stage=s, barrier=k_full)
            lm.wait(v_empty, stage=s)
            sv.tma_load(Vt, coords=(b, h // G, j), stage=s, barrier=v_full)

    with math:
        lm.wait(q_full)
        # Block 0: S_0 and its softmax; nothing to rescale yet.
        lm.wait(k_full, stage=0)
        lm.mma(s_acc, sq, sk[0], init=True)
        if 127 >= Sk or (causal == 1 and 127 > diag):           # the key tail, the diagonal
            hidden0 = (lm.col_index(s_acc) > lm.row_index(s_acc, base=last)) or (lm.col_index(s_acc) >= Sk)
            s_acc = lm.where(hidden0, -lm.inf, s_acc)
        m_i = s_acc.max(axis=1) * scale_log2
        m_use0 = lm.where(m_i == -lm.inf, 0.0, m_i)             # a row that sees no key yet
        p_i = lm.exp2(s_acc * scale_log2 - m_use0)              # exp2(−inf) = 0 where masked
        l_i = p_i.sum(axis=1)
        lm.arrive(k_empty, stage=0)
        # Block j: S_j is issued, then P_{j-1}·V_{j-1} behind it, so the softmax of S_j runs
        # while that wgmma does; O is rescaled once it has retired.
        for j in lm.range(1, n_blocks):
            s = j % 2
            lm.wait(k_full, stage=s)
            lm.mma(s_acc, sq, sk[s], init=True)
            lm.wait(v_full, stage=1 - s)
            lm.mma(o_acc, p_i.to(lm.bf16), sv[1 - s], init=(j == 1))
            if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                col = lm.col_index(s_acc, base=j * 128)
                s_acc = lm.where((col > lm.row_index(s_acc, base=last)) or (col >= Sk), -lm.inf, s_acc)
            m_new = lm.max(m_i, s_acc.max(axis=1) * scale_log2)
            m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
            p_i = lm.exp2(s_acc * scale_log2 - m_use)
            alpha = lm.exp2(m_i - m_use)
            l_i = l_i * alpha + p_i.sum(axis=1)
            m_i = m_new
            lm.arrive(k_empty, stage=s)                          # S_j has retired
            o_acc = o_acc * alpha                                # waits for P_{j-1}·V_{j-1}
            lm.arrive(v_empty, stage=1 - s)
        # The last block's P·V.
        last_s = (n_blocks - 1) % 2
        lm.wait(v_full, stage=last_s)
        lm.mma(o_acc, p_i.to(lm.bf16), sv[last_s], init=(n_blocks == 1))
        inv_l = lm.where(l_i > 0.0, 1.0 / l_i, 0.0)
        O.tma_store((o_acc * inv_l).to(lm.bf16), coords=(b * tiles_m + mt, h))
        Lse.store((m_i + lm.log2(l_i)) * 0.6931471805599453, coords=(b * H + h, mt))
