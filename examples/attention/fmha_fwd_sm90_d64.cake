# Attention forward on Hopper, head dim 64: examples/attention/fmha_fwd_sm90.cake (whose
# header describes the schedule) with 64-wide Q, K and Vᵀ tiles and a 128×64 O accumulator;
# the two files differ only in those shapes and the SMEM offsets.
@cake.schedule(target="sm_90a")
def fmha_fwd_sm90_d64(lm, Q: LM.tma3d, K: LM.tma3d, Vt: LM.tma3d, O: LM.tensor2d,
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

    pool = lm.smem(81920)                     # Q 16 KiB + 2 × K 16 KiB + 2 × Vᵀ 16 KiB
    sq = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sk = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=49152, shape=(64, 128), dtype=lm.bf16, stage=2, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=1, prod=[load], cons=[math])
    k_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    v_full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    k_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    v_empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)

    s_acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    o_acc = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
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
