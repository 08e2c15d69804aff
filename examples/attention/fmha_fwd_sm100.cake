# Attention forward on Blackwell (sm_100a / sm_103a), head dim 128: the problem, layouts and
# masks of examples/attention/fmha_fwd_sm90.cake (its header), with S and O in Tensor Memory.
# Verified and assembled here (SASS: UTCHMMA, LDTM); not run (no Blackwell GPU).
#
# Schedule (one CTA per (128-query tile, head, batch)):
# * a TMA warp loads the Q tile once and streams K and V tiles of 128 keys through 2-stage
#   rings, K and V on their own barriers both ways;
# * one MMA warp, one thread issuing: S_j = Q·K_jᵀ into TMEM (`s_t`, 128 columns) as soon as
#   the softmax has read S_(j−1) (`s_empty`), then O_j = P_j·V_j into TMEM (`o_t`) from P_j in
#   SMEM and V_j read MN-major (`sv[s].T`), once the softmax has written P_j and read O_(j−1);
# * a 4-warp softmax role, one warp per TMEM lane quarter, one query row per thread: reads S_j
#   with tcgen05.ld 32 columns at a time (never all 128 in registers), masks it (index
#   comparisons: key tail, bottom-right causal diagonal), keeps the running max m and sum l
#   in the log2 domain, writes P_j = 2^(S_j·scale − m) as bf16 into SMEM (the A operand of
#   the next MMA: tcgen05.mma reads A from SMEM here), and accumulates O in registers,
#   O = O·α_(j−1) + O_(j−1) with α = 2^(m_old − m_new), as each O_j lands in TMEM (the language
#   has no TMEM store yet, so O is not rescaled in place as FA4's correction warpgroup does;
#   its 128 registers per thread make ptxas spill 204 bytes);
# * causal: the KV blocks wholly above the diagonal are never loaded; a row that sees no key
#   keeps m = −inf, so P and α are 0, O = 0 and lse = −inf, never NaN.
# What the faster form would add: two S buffers in TMEM (the MMA of S_(j+1) under the softmax
# of S_j), P written over S in TMEM as the MMA's A operand, O rescaled in TMEM by a
# correction warpgroup, a persistent grid.
@cake.schedule(target="sm_100a")
def fmha_fwd_sm100(lm, Q: LM.tma3d, K: LM.tma3d, V: LM.tma3d, O: LM.tensor2d,
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
    n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)

    pool = lm.smem(196608)                    # Q, P 32 KiB each; K, V 2 stages × 32 KiB each
    sq = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sp = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    sk = pool.view(offset=65536, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    s_t = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    o_t = lm.tmem(cols=128, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    softmax = lm.role(warps=[4, 5, 6, 7])
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=1, prod=[load], cons=[mma])
    k_full = lm.barrier(count=2, prod=[load], cons=[mma], pipeline=pipe)
    v_full = lm.barrier(count=2, prod=[load], cons=[mma], pipeline=pipe)
    k_empty = lm.barrier(count=2, prod=[mma], cons=[load], pipeline=pipe)
    v_empty = lm.barrier(count=2, prod=[mma], cons=[load], pipeline=pipe)
    s_full = lm.barrier(count=1, prod=[mma], cons=[softmax])     # S_j is in TMEM
    s_empty = lm.barrier(count=1, prod=[softmax], cons=[mma])    # ... and has been read
    p_full = lm.barrier(count=1, prod=[softmax], cons=[mma])     # P_j is in SMEM
    p_empty = lm.barrier(count=1, prod=[mma], cons=[softmax])    # ... and has been read
    o_full = lm.barrier(count=1, prod=[mma], cons=[softmax])     # O_j is in TMEM (P_j read)
    o_empty = lm.barrier(count=1, prod=[softmax], cons=[mma])    # ... and has been read

    o_acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=softmax)
    m_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=softmax)    # running max, log2 domain
    l_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=softmax)    # running sum of P
    a_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=softmax)    # α of the last block

    with load:
        sq.tma_load(Q, coords=(b, mt, h), barrier=q_full)
        for j in lm.range(0, n_blocks):
            s = j % 2
            lm.wait(k_empty, stage=s)
            sk.tma_load(K, coords=(b, j, h // G), stage=s, barrier=k_full)
            lm.wait(v_empty, stage=s)
            sv.tma_load(V, coords=(b, j, h // G), stage=s, barrier=v_full)

    with mma:
        lm.wait(q_full)
        for j in lm.range(0, n_blocks):
            s = j % 2
            lm.wait(s_empty)
            lm.wait(k_full, stage=s)
            lm.mma(s_t, sq, sk[s], init=True)
            lm.commit(k_empty, stage=s)
            lm.commit(s_full)
            lm.wait(p_full)
            lm.wait(o_empty)
            lm.wait(v_full, stage=s)
            lm.mma(o_t, sp, sv[s].T, init=True)
            lm.commit(v_empty, stage=s)
            lm.commit(p_empty)
            lm.commit(o_full)

    with softmax:
        o_acc = 0.0
        a_i = 1.0
        m_i = -lm.inf
        l_i = 0.0
        for j in lm.range(0, n_blocks):
            lm.wait(s_full)
            # S_j masked (key tail, causal diagonal), written out at each of its three reads:
            # a named tile would be held in registers (128 per thread beside O's 128).
            m_new = lm.max(m_i, lm.where(
                (lm.col_index(o_acc, base=j * 128) > lm.row_index(o_acc, base=last))
                or (lm.col_index(o_acc, base=j * 128) >= Sk), -lm.inf, s_t).max(axis=1) * scale_log2)
            m_use = lm.where(m_new == -lm.inf, 0.0, m_new)   # a row that sees no key yet
            alpha = lm.exp2(m_i - m_use)
            l_i = l_i * alpha + lm.exp2(lm.where(
                (lm.col_index(o_acc, base=j * 128) > lm.row_index(o_acc, base=last))
                or (lm.col_index(o_acc, base=j * 128) >= Sk), -lm.inf, s_t) * scale_log2
                - m_use).sum(axis=1)
            lm.wait(p_empty)                                 # P_(j-1)·V_(j-1) has read sp
            sp[0].store(lm.exp2(lm.where(
                (lm.col_index(o_acc, base=j * 128) > lm.row_index(o_acc, base=last))
                or (lm.col_index(o_acc, base=j * 128) >= Sk), -lm.inf, s_t) * scale_log2
                - m_use).to(lm.bf16))
            lm.fence_proxy()
            lm.arrive(s_empty)
            lm.arrive(p_full)
            if j > 0:                                        # O_(j-1) has landed in TMEM
                lm.wait(o_full)
                o_acc = o_acc * a_i + o_t
                lm.arrive(o_empty)
            a_i = alpha
            m_i = m_new
        lm.wait(o_full)
        o_acc = o_acc * a_i + o_t
        lm.arrive(o_empty)
        inv_l = lm.where(l_i > 0.0, 1.0 / l_i, 0.0)
        O.tma_store((o_acc * inv_l).to(lm.bf16), coords=(b * tiles_m + mt, h))
        Lse.store((m_i + lm.log2(l_i)) * 0.6931471805599453, coords=(b * H + h, mt))
