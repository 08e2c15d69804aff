# Attention forward on Hopper, head dim 64: examples/attention/fmha_fwd_sm90.cake's problem,
# layouts and masks (its header), with the two consumer warpgroups as two roles in
# FlashAttention-3's ping-pong — the form that measured fastest at this head dim:
# * persistent (one CTA per SM) at every S, the tiles walked longest first with alternating
#   rounds, as fmha_fwd_sm90.cake does for causal;
# * `wg0` and `wg1` (240 registers each) own 64 query rows each, their own Q stages and
#   running tiles; each issues a block's GEMMs (S_j, then P_(j−1)·V_(j−1)) only in its turn:
#   it waits on `turn0` (`turn1`) before and arrives on the other's after, wg1 hands wg0 the
#   first turn before its loop and wg0 takes wg1's last after its own, so one warpgroup's
#   softmax runs while the other's wgmmas keep the tensor cores busy (a wrong turn order is
#   a deadlock or an unconsumed phase at verify: test/lit/attention/pingpong_turns.test);
# * K and V rings shared by both (each stage goes back when both have released it); Q in two
#   stages per warpgroup, loaded after the tile's first K.
# The two consumer bodies differ only in their names and row offset: the language cannot yet
# give one role's warpgroups their own turns. No spills (ptxas).
@cake.schedule(target="sm_90a")
def fmha_fwd_sm90_d64_m192(lm, Q: LM.tma3d, K: LM.tma3d, V: LM.tma3d, O: LM.tensor2d,
                  Lse: LM.tensor2d, B: LM.i32, Sq: LM.i32, Sk: LM.i32, H: LM.i32, G: LM.i32,
                  scale_log2: LM.f32, causal: LM.i32):
    tiles_m = lm.cdiv(Sq, 192)
    heads = H * B
    tiles = tiles_m * heads
    lm.grid(lm.min(tiles, lm.sm_count()))
    kv_blocks = lm.cdiv(Sk, 128)

    pool = lm.smem(114688)  # Q 2 stages × 3 × 8 KiB (one per warpgroup), K and V 2 × 16 KiB
    sq0 = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sq1 = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sq2 = pool.view(offset=32768, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sk = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=81920, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=24)
    wg0 = lm.role(warps=[4, 5, 6, 7], regs=160)
    wg1 = lm.role(warps=[8, 9, 10, 11], regs=160)
    wg2 = lm.role(warps=[12, 13, 14, 15], regs=160)
    wgs = [wg0, wg1, wg2]
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=2, prod=[load], cons=wgs, init_count=3)
    q_empty = lm.barrier(count=2, prod=wgs, cons=[load], init_count=3)
    k_full = lm.barrier(count=2, prod=[load], cons=wgs, pipeline=pipe)
    v_full = lm.barrier(count=2, prod=[load], cons=wgs, pipeline=pipe)
    k_empty = lm.barrier(count=2, prod=wgs, cons=[load], init_count=3, pipeline=pipe)
    v_empty = lm.barrier(count=2, prod=wgs, cons=[load], init_count=3, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[wg2], cons=[wg0])
    turn1 = lm.barrier(count=1, prod=[wg0], cons=[wg1])
    turn2 = lm.barrier(count=1, prod=[wg1], cons=[wg2])

    s0 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg0)
    o0 = lm.regs(shape=(64, 64), dtype=lm.f32, role=wg0)
    p0 = lm.regs(shape=(64, 128), dtype=lm.bf16, role=wg0)   # P, the next P·V's A
    m0 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg0)
    l0 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg0)
    s1 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg1)
    o1 = lm.regs(shape=(64, 64), dtype=lm.f32, role=wg1)
    p1 = lm.regs(shape=(64, 128), dtype=lm.bf16, role=wg1)   # P, the next P·V's A
    m1 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg1)
    l1 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg1)
    s2 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg2)
    o2 = lm.regs(shape=(64, 64), dtype=lm.f32, role=wg2)
    p2 = lm.regs(shape=(64, 128), dtype=lm.bf16, role=wg2)   # P, the next P·V's A
    m2 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg2)
    l2 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg2)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            h = (u % heads) % H
            b = (u % heads) // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 192 + 192 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            # K_0 first, then this tile's Q (into the Q stage the last tile did not use).
            lm.wait(k_empty, stage=s_0)
            sk.tma_load(K, coords=(b, 0, h // G), stage=s_0, barrier=k_full)
            lm.wait(q_empty, stage=qs)
            sq0.tma_load(Q, coords=(b, mt * 3, h), stage=qs, barrier=q_full)
            sq1.tma_load(Q, coords=(b, mt * 3 + 1, h), stage=qs, barrier=q_full)
            sq2.tma_load(Q, coords=(b, mt * 3 + 2, h), stage=qs, barrier=q_full)
            lm.wait(v_empty, stage=s_0)
            sv.tma_load(V, coords=(b, 0, h // G), stage=s_0, barrier=v_full)
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_empty, stage=s)
                sk.tma_load(K, coords=(b, j, h // G), stage=s, barrier=k_full)
                lm.wait(v_empty, stage=s)
                sv.tma_load(V, coords=(b, j, h // G), stage=s, barrier=v_full)

    with wg0:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            h = (u % heads) % H
            b = (u % heads) // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 192 + 192 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 192 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 and its softmax; nothing to rescale yet.
            lm.wait(k_full, stage=s_0)
            lm.wait(turn0)
            lm.mma(s0, sq0[qs], sk[s_0], init=True)
            lm.arrive(turn1)
            if 127 >= Sk or (causal == 1 and 127 > diag):
                col0 = lm.col_index(s0)
                hidden0 = (col0 > lm.row_index(s0, base=last)) or (col0 >= Sk)
                s0 = lm.where(hidden0, -lm.inf, s0)
            m0 = s0.max(axis=1) * scale_log2
            m_use0 = lm.where(m0 == -lm.inf, 0.0, m0)          # a row that sees no key yet
            pf0 = lm.exp2(s0 * scale_log2 - m_use0)            # exp2(−inf) = 0 where masked
            l0 = pf0.sum(axis=1)
            p0 = pf0.to(lm.bf16)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.wait(turn0)
                lm.mma(s0, sq0[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o0, p0, sv[1 - s].T, init=(j == 1))
                lm.arrive(turn1)
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    col = lm.col_index(s0, base=j * 128)
                    hidden = (col > lm.row_index(s0, base=last)) or (col >= Sk)
                    s0 = lm.where(hidden, -lm.inf, s0)
                m_new = lm.max(m0, s0.max(axis=1) * scale_log2)
                m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
                pf = lm.exp2(s0 * scale_log2 - m_use)
                alpha = lm.exp2(m0 - m_use)
                l0 = l0 * alpha + pf.sum(axis=1)
                p0 = pf.to(lm.bf16)
                m0 = m_new
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                o0 = o0 * alpha                              # waits for P_(j-1)·V_(j-1)
                lm.arrive(v_empty, stage=1 - s)
            # The last block's P·V; the last S (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o0, p0, sv[last_s].T, init=(n_blocks == 1))
            lm.arrive(q_empty, stage=qs)
            inv_l = lm.where(l0 > 0.0, 1.0 / l0, 0.0)
            O.tma_store((o0 * inv_l).to(lm.bf16), coords=((b * tiles_m + mt) * 3, h))
            Lse.store((m0 + lm.log2(l0)) * 0.6931471805599453, coords=(b * H + h, mt * 3))
            lm.arrive(v_empty, stage=last_s)                 # the store read O: its P·V retired
        lm.wait(turn0)                            # warpgroup 2's last turn

    with wg1:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            h = (u % heads) % H
            b = (u % heads) // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 192 + 192 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 192 + 64 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 and its softmax; nothing to rescale yet.
            lm.wait(k_full, stage=s_0)
            lm.wait(turn1)
            lm.mma(s1, sq1[qs], sk[s_0], init=True)
            lm.arrive(turn2)
            if 127 >= Sk or (causal == 1 and 127 > diag):
                col0 = lm.col_index(s1)
                hidden0 = (col0 > lm.row_index(s1, base=last)) or (col0 >= Sk)
                s1 = lm.where(hidden0, -lm.inf, s1)
            m1 = s1.max(axis=1) * scale_log2
            m_use0 = lm.where(m1 == -lm.inf, 0.0, m1)          # a row that sees no key yet
            pf0 = lm.exp2(s1 * scale_log2 - m_use0)            # exp2(−inf) = 0 where masked
            l1 = pf0.sum(axis=1)
            p1 = pf0.to(lm.bf16)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.wait(turn1)
                lm.mma(s1, sq1[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o1, p1, sv[1 - s].T, init=(j == 1))
                lm.arrive(turn2)
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    col = lm.col_index(s1, base=j * 128)
                    hidden = (col > lm.row_index(s1, base=last)) or (col >= Sk)
                    s1 = lm.where(hidden, -lm.inf, s1)
                m_new = lm.max(m1, s1.max(axis=1) * scale_log2)
                m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
                pf = lm.exp2(s1 * scale_log2 - m_use)
                alpha = lm.exp2(m1 - m_use)
                l1 = l1 * alpha + pf.sum(axis=1)
                p1 = pf.to(lm.bf16)
                m1 = m_new
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                o1 = o1 * alpha                              # waits for P_(j-1)·V_(j-1)
                lm.arrive(v_empty, stage=1 - s)
            # The last block's P·V; the last S (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o1, p1, sv[last_s].T, init=(n_blocks == 1))
            lm.arrive(q_empty, stage=qs)
            inv_l = lm.where(l1 > 0.0, 1.0 / l1, 0.0)
            O.tma_store((o1 * inv_l).to(lm.bf16), coords=((b * tiles_m + mt) * 3 + 1, h))
            Lse.store((m1 + lm.log2(l1)) * 0.6931471805599453, coords=(b * H + h, mt * 3 + 1))
            lm.arrive(v_empty, stage=last_s)                 # the store read O: its P·V retired

    with wg2:
        lm.arrive(turn0)                          # warpgroup 0 issues first
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            h = (u % heads) % H
            b = (u % heads) // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 192 + 192 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 192 + 128 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 and its softmax; nothing to rescale yet.
            lm.wait(k_full, stage=s_0)
            lm.wait(turn2)
            lm.mma(s2, sq2[qs], sk[s_0], init=True)
            lm.arrive(turn0)
            if 127 >= Sk or (causal == 1 and 127 > diag):
                col0 = lm.col_index(s2)
                hidden0 = (col0 > lm.row_index(s2, base=last)) or (col0 >= Sk)
                s2 = lm.where(hidden0, -lm.inf, s2)
            m2 = s2.max(axis=1) * scale_log2
            m_use0 = lm.where(m2 == -lm.inf, 0.0, m2)          # a row that sees no key yet
            pf0 = lm.exp2(s2 * scale_log2 - m_use0)            # exp2(−inf) = 0 where masked
            l2 = pf0.sum(axis=1)
            p2 = pf0.to(lm.bf16)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.wait(turn2)
                lm.mma(s2, sq2[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o2, p2, sv[1 - s].T, init=(j == 1))
                lm.arrive(turn0)
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    col = lm.col_index(s2, base=j * 128)
                    hidden = (col > lm.row_index(s2, base=last)) or (col >= Sk)
                    s2 = lm.where(hidden, -lm.inf, s2)
                m_new = lm.max(m2, s2.max(axis=1) * scale_log2)
                m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
                pf = lm.exp2(s2 * scale_log2 - m_use)
                alpha = lm.exp2(m2 - m_use)
                l2 = l2 * alpha + pf.sum(axis=1)
                p2 = pf.to(lm.bf16)
                m2 = m_new
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                o2 = o2 * alpha                              # waits for P_(j-1)·V_(j-1)
                lm.arrive(v_empty, stage=1 - s)
            # The last block's P·V; the last S (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o2, p2, sv[last_s].T, init=(n_blocks == 1))
            lm.arrive(q_empty, stage=qs)
            inv_l = lm.where(l2 > 0.0, 1.0 / l2, 0.0)
            O.tma_store((o2 * inv_l).to(lm.bf16), coords=((b * tiles_m + mt) * 3 + 2, h))
            Lse.store((m2 + lm.log2(l2)) * 0.6931471805599453, coords=(b * H + h, mt * 3 + 2))
            lm.arrive(v_empty, stage=last_s)                 # the store read O: its P·V retired
