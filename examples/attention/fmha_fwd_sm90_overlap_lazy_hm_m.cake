# Attention forward on Hopper, head dim 128: fmha_fwd_sm90_overlap_lazy_hm.cake (its header) with
# the causal mask (and a ragged key tail) as one compare a score against each row's last
# visible key, counted from the block's first: min(row + last − j·128, S_k − 1 − j·128), an
# (M, 1) tile. The form it replaces (`col > row` or `col >= S_k` on global indices) cost
# 359–390 instructions a warp in the masked block, this one 170 (NVRTC 13.5, 168 registers,
# 0 spills); a causal tile has one masked block.
# A candidate beside it until a GPU run times both (docs/codegen.md, "The causal mask").
@cake.schedule(target="sm_90a")
def fmha_fwd_sm90_overlap_lazy_hm_m(lm, Q: LM.tma3d, K: LM.tma3d, V: LM.tma3d, O: LM.tma2d,
                                  Lse: LM.tensor2d, B: LM.i32, Sq: LM.i32, Sk: LM.i32, H: LM.i32,
                                  G: LM.i32, scale_log2: LM.f32, causal: LM.i32):
    tiles_m = lm.cdiv(Sq, 128)
    heads = H * B
    tiles = tiles_m * heads
    lm.grid(lm.min(tiles, lm.sm_count()))
    kv_blocks = lm.cdiv(Sk, 128)

    pool = lm.smem(229376)  # Q, K and V: 2 stages × 32 KiB each; O: one 32 KiB stage
    sq = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sk = pool.view(offset=65536, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=131072, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    so = pool.view(offset=196608, shape=(128, 128), dtype=lm.bf16, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=24)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=240)
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=2, prod=[load], cons=[math])
    q_empty = lm.barrier(count=2, prod=[math], cons=[load])
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
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            # The tile at place u of a head-major order: a head's tiles side by side, so the CTAs
            # at work share its K and V in L2 (an order across heads read them from DRAM per tile).
            # Causal: its longest tile, its shortest, the 2nd longest, the 2nd shortest, ...; rounds
            # i, i + 1 take places w0 … w0 + 2·ctas, CTA c places 2c and 2c + 1 (a long and a short
            # tile: equal work for every CTA), the ragged last window one place for each CTA past
            # the pairs.
            w0 = (i - i % 2) * lm.num_blocks(0)
            dw = lm.max(lm.min(lm.num_blocks(0), tiles - w0 - lm.num_blocks(0)), 0)
            u = (w0 + lm.min(2 * lm.block_id(0), lm.block_id(0) + dw) + i % 2) % tiles
            r = u % tiles_m
            mt = ((tiles_m - 1 - r // 2) if r % 2 == 0 else r // 2) if causal == 1 else r
            hb = u // tiles_m
            h = hb % H
            b = hb // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 128 + 128 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            # K_0 first, then this tile's Q (into the Q stage the last tile did not use).
            lm.wait(k_empty, stage=s_0)
            sk.tma_load(K, coords=(b, 0, h // G), stage=s_0, barrier=k_full)
            lm.wait(q_empty, stage=qs)
            sq.tma_load(Q, coords=(b, mt, h), stage=qs, barrier=q_full)
            lm.wait(v_empty, stage=s_0)
            sv.tma_load(V, coords=(b, 0, h // G), stage=s_0, barrier=v_full)
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_empty, stage=s)
                sk.tma_load(K, coords=(b, j, h // G), stage=s, barrier=k_full)
                lm.wait(v_empty, stage=s)
                sv.tma_load(V, coords=(b, j, h // G), stage=s, barrier=v_full)

    with math:
        o_acc = 0.0                                   # read first by tile 0's empty epilogue
        m_i = -lm.inf
        l_i = 0.0
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            w0 = (i - i % 2) * lm.num_blocks(0)
            dw = lm.max(lm.min(lm.num_blocks(0), tiles - w0 - lm.num_blocks(0)), 0)
            u = (w0 + lm.min(2 * lm.block_id(0), lm.block_id(0) + dw) + i % 2) % tiles
            r = u % tiles_m
            mt = ((tiles_m - 1 - r // 2) if r % 2 == 0 else r // 2) if causal == 1 else r
            hb = u // tiles_m
            h = hb % H
            b = hb // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 128 + 128 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 128 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 is issued, and the tile before is stored while it runs.
            lm.wait(k_full, stage=s_0)
            lm.mma(s_acc, sq[qs], sk[s_0], init=True)
            # The epilogue of this CTA's tile before, under S_0 (its index arithmetic again,
            # for tile t − num_blocks): O normalised, staged in `so` and copied out by TMA (not
            # waited for: the next `store` into `so` waits for the copy to have read it), lse
            # stored. Tile 0 has none: its copy and lse rows are aimed past the tensors' ends
            # (a TMA store box that starts outside O is not issued, the lse store is
            # bounds-checked: nothing is written), so no branch holds the accumulator's read
            # (with one, ptxas serialises every wgmma: C7514).
            ip = lm.max(i - 1, 0)                          # (tile 0: any tile in range)
            w0p = (ip - ip % 2) * lm.num_blocks(0)
            dwp = lm.max(lm.min(lm.num_blocks(0), tiles - w0p - lm.num_blocks(0)), 0)
            up = (w0p + lm.min(2 * lm.block_id(0), lm.block_id(0) + dwp) + ip % 2) % tiles
            rp = up % tiles_m
            mtp = ((tiles_m - 1 - rp // 2) if rp % 2 == 0 else rp // 2) if causal == 1 else rp
            hbp = up // tiles_m
            inv_lp = lm.where(l_i > 0.0, 1.0 / l_i, 0.0)
            so[0].store((o_acc * inv_lp).to(lm.bf16))       # waits for the last P·V only
            lm.fence_proxy()
            O.tma_store(so[0], coords=((hbp // H) * tiles_m + mtp if i > 0 else B * tiles_m,
                                       hbp % H))
            Lse.store((m_i + lm.log2(l_i)) * 0.6931471805599453,
                      coords=(hbp if i > 0 else B * H, mtp))
            if 127 >= Sk or (causal == 1 and 127 > diag):
                lim0 = lm.min(lm.row_index(s_acc, base=last), Sk - 1)  # each row's last key
                s_acc = lm.where(lm.col_index(s_acc) > lim0, -lm.inf, s_acc)
            m_i = s_acc.max(axis=1) * scale_log2
            m_use0 = lm.where(m_i == -lm.inf, 0.0, m_i)          # a row that sees no key yet
            p_i = lm.exp2(s_acc * scale_log2 - m_use0)             # exp2(−inf) = 0 where masked
            l_i = p_i.sum(axis=1)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.mma(s_acc, sq[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o_acc, p_i.to(lm.bf16), sv[1 - s].T, init=(j == 1))
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    # each row's last key, counted from this block's first
                    lim = lm.min(lm.row_index(s_acc, base=last - j * 128), Sk - 1 - j * 128)
                    s_acc = lm.where(lm.col_index(s_acc) > lim, -lm.inf, s_acc)
                m_blk = s_acc.max(axis=1) * scale_log2
                if lm.any(m_blk > m_i + 8.0):                 # some row of this warp grew 2^8×
                    m_new = lm.max(m_i, m_blk)
                    alpha = lm.exp2(m_i - lm.where(m_new == -lm.inf, 0.0, m_new))
                    l_i = l_i * alpha
                    m_i = m_new
                    o_acc = o_acc * alpha                        # waits for P_(j-1)·V_(j-1)
                m_use = lm.where(m_i == -lm.inf, 0.0, m_i)
                p_i = lm.exp2(s_acc * scale_log2 - m_use)          # ≤ 2^8 with a stale max
                l_i = l_i + p_i.sum(axis=1)
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                lm.commit(v_empty, stage=1 - s)                # waits for it where O was not rescaled
            # The last block's P·V (its O is stored under the next tile's S_0); the last S
            # (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o_acc, p_i.to(lm.bf16), sv[last_s].T, init=(n_blocks == 1))
            lm.commit(v_empty, stage=last_s)                 # once that P·V has completed
            lm.arrive(q_empty, stage=qs)
        # The epilogue of this CTA's last tile (t = block_id + (n − 1)·num_blocks).
        il = lm.cdiv(tiles - lm.block_id(0), lm.num_blocks(0)) - 1
        w0l = (il - il % 2) * lm.num_blocks(0)
        dwl = lm.max(lm.min(lm.num_blocks(0), tiles - w0l - lm.num_blocks(0)), 0)
        ul = (w0l + lm.min(2 * lm.block_id(0), lm.block_id(0) + dwl) + il % 2) % tiles
        rl = ul % tiles_m
        mtl = ((tiles_m - 1 - rl // 2) if rl % 2 == 0 else rl // 2) if causal == 1 else rl
        hbl = ul // tiles_m
        inv_l = lm.where(l_i > 0.0, 1.0 / l_i, 0.0)
        so[0].store((o_acc * inv_l).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so[0], coords=((hbl // H) * tiles_m + mtl, hbl % H))
        Lse.store((m_i + lm.log2(l_i)) * 0.6931471805599453,
                  coords=(hbl, mtl))
