# Attention forward on Hopper, head dim 64: fmha_fwd_sm90_d64_overlap.cake (its header) with
# the causal mask (and a ragged key tail) as one compare a score: each row's last visible key,
# counted from the block's first, min(row + last − j·128, S_k − 1 − j·128), is an (M, 1) tile,
# and a column is hidden where its index within the block exceeds it. The form it replaces
# (`col > row` or `col >= S_k` on global indices) cost 390 instructions a warp in the masked
# block (two compares, the column's global index and register moves per score), this one 170
# (NVRTC 13.5), and a causal tile has one masked block per warpgroup.
# A candidate beside it until a GPU run times both (docs/codegen.md, "The causal mask").
@cake.schedule(target="sm_90a")
def fmha_fwd_sm90_d64_overlap_m(lm, Q: LM.tma3d, K: LM.tma3d, V: LM.tma3d, O: LM.tma2d,
                               Lse: LM.tensor2d,
                               B: LM.i32, Sq: LM.i32, Sk: LM.i32, H: LM.i32, G: LM.i32,
                               scale_log2: LM.f32, causal: LM.i32):
    tiles_m = lm.cdiv(Sq, 128)
    heads = H * B
    tiles = tiles_m * heads
    lm.grid(lm.min(tiles, lm.sm_count()))
    kv_blocks = lm.cdiv(Sk, 128)

    pool = lm.smem(114688)  # Q 2 stages × 2 × 8 KiB (one per warpgroup), K and V 2 × 16 KiB,
    #                          O 8 KiB per warpgroup
    sq0 = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sq1 = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sk = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sv = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    so0 = pool.view(offset=98304, shape=(64, 64), dtype=lm.bf16, swizzle=128b)
    so1 = pool.view(offset=106496, shape=(64, 64), dtype=lm.bf16, swizzle=128b)

    load = lm.role(warps=[0, 1, 2, 3], regs=24)
    wg0 = lm.role(warps=[4, 5, 6, 7], regs=240)
    wg1 = lm.role(warps=[8, 9, 10, 11], regs=240)
    pipe = lm.pipeline(stages=2)
    q_full = lm.barrier(count=2, prod=[load], cons=[wg0, wg1], init_count=2)
    q_empty = lm.barrier(count=2, prod=[wg0, wg1], cons=[load], init_count=2)
    k_full = lm.barrier(count=2, prod=[load], cons=[wg0, wg1], pipeline=pipe)
    v_full = lm.barrier(count=2, prod=[load], cons=[wg0, wg1], pipeline=pipe)
    k_empty = lm.barrier(count=2, prod=[wg0, wg1], cons=[load], init_count=2, pipeline=pipe)
    v_empty = lm.barrier(count=2, prod=[wg0, wg1], cons=[load], init_count=2, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[wg1], cons=[wg0])
    turn1 = lm.barrier(count=1, prod=[wg0], cons=[wg1])

    s0 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg0)
    o0 = lm.regs(shape=(64, 64), dtype=lm.f32, role=wg0)
    p0 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg0)
    m0 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg0)
    l0 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg0)
    s1 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg1)
    o1 = lm.regs(shape=(64, 64), dtype=lm.f32, role=wg1)
    p1 = lm.regs(shape=(64, 128), dtype=lm.f32, role=wg1)
    m1 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg1)
    l1 = lm.regs(shape=(64, 1), dtype=lm.f32, role=wg1)

    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            h = (u % heads) % H
            b = (u % heads) // H
            seen = lm.min(kv_blocks, lm.cdiv(mt * 128 + 128 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            # K_0 first, then this tile's Q (into the Q stage the last tile did not use).
            lm.wait(k_empty, stage=s_0)
            sk.tma_load(K, coords=(b, 0, h // G), stage=s_0, barrier=k_full)
            lm.wait(q_empty, stage=qs)
            sq0.tma_load(Q, coords=(b, mt * 2, h), stage=qs, barrier=q_full)
            sq1.tma_load(Q, coords=(b, mt * 2 + 1, h), stage=qs, barrier=q_full)
            lm.wait(v_empty, stage=s_0)
            sv.tma_load(V, coords=(b, 0, h // G), stage=s_0, barrier=v_full)
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_empty, stage=s)
                sk.tma_load(K, coords=(b, j, h // G), stage=s, barrier=k_full)
                lm.wait(v_empty, stage=s)
                sv.tma_load(V, coords=(b, j, h // G), stage=s, barrier=v_full)

    with wg0:
        o0 = 0.0                                    # read first by tile 0's empty epilogue
        m0 = -lm.inf
        l0 = 0.0
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            seen = lm.min(kv_blocks, lm.cdiv(mt * 128 + 128 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 128 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 is issued in this warpgroup's turn, and the tile before is stored
            # while it runs.
            lm.wait(k_full, stage=s_0)
            lm.wait(turn0)
            lm.mma(s0, sq0[qs], sk[s_0], init=True)
            lm.arrive(turn1)
            # The epilogue of this CTA's tile before (its index arithmetic again, for tile
            # t − num_blocks): O normalised, staged and copied out by TMA (not waited for),
            # lse stored; tile 0's are aimed past the tensors' ends (nothing is written).
            tp = lm.max(t - lm.num_blocks(0), 0)           # (tile 0: any tile in range)
            up = ((i * lm.num_blocks(0) - 1 - lm.block_id(0)) if (i % 2 == 0 and
                  i * lm.num_blocks(0) <= tiles) else tp) % tiles
            mtp = tiles_m - 1 - up // heads
            hbp = up % heads
            inv_lp = lm.where(l0 > 0.0, 1.0 / l0, 0.0)
            so0[0].store((o0 * inv_lp).to(lm.bf16))       # waits for the last P·V only
            lm.fence_proxy()
            O.tma_store(so0[0], coords=((((hbp // H) * tiles_m + mtp) * 2) if i > 0
                                        else B * tiles_m * 2, hbp % H))
            Lse.store((m0 + lm.log2(l0)) * 0.6931471805599453,
                      coords=(hbp if i > 0 else B * H, mtp * 2))
            if 127 >= Sk or (causal == 1 and 127 > diag):
                lim0 = lm.min(lm.row_index(s0, base=last), Sk - 1)  # each row's last key
                s0 = lm.where(lm.col_index(s0) > lim0, -lm.inf, s0)
            m0 = s0.max(axis=1) * scale_log2
            m_use0 = lm.where(m0 == -lm.inf, 0.0, m0)          # a row that sees no key yet
            p0 = lm.exp2(s0 * scale_log2 - m_use0)             # exp2(−inf) = 0 where masked
            l0 = p0.sum(axis=1)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.wait(turn0)
                lm.mma(s0, sq0[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o0, p0.to(lm.bf16), sv[1 - s].T, init=(j == 1))
                lm.arrive(turn1)
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    # each row's last key, counted from this block's first
                    lim = lm.min(lm.row_index(s0, base=last - j * 128), Sk - 1 - j * 128)
                    s0 = lm.where(lm.col_index(s0) > lim, -lm.inf, s0)
                m_new = lm.max(m0, s0.max(axis=1) * scale_log2)
                m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
                p0 = lm.exp2(s0 * scale_log2 - m_use)
                alpha = lm.exp2(m0 - m_use)
                l0 = l0 * alpha + p0.sum(axis=1)
                m0 = m_new
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                o0 = o0 * alpha                              # waits for P_(j-1)·V_(j-1)
                lm.commit(v_empty, stage=1 - s)                # (it has: nothing to wait for)
            # The last block's P·V (its O is stored under the next tile's S_0); the last S
            # (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o0, p0.to(lm.bf16), sv[last_s].T, init=(n_blocks == 1))
            lm.commit(v_empty, stage=last_s)                 # once that P·V has completed
            lm.arrive(q_empty, stage=qs)
        # The epilogue of this CTA's last tile (t = block_id + (n − 1)·num_blocks).
        n = lm.cdiv(tiles - lm.block_id(0), lm.num_blocks(0))
        il = n - 1
        tl = lm.block_id(0) + il * lm.num_blocks(0)
        ul = ((n * lm.num_blocks(0) - 1 - lm.block_id(0)) if (il % 2 == 1 and
              n * lm.num_blocks(0) <= tiles) else tl) % tiles
        mtl = tiles_m - 1 - ul // heads
        hbl = ul % heads
        inv_l = lm.where(l0 > 0.0, 1.0 / l0, 0.0)
        so0[0].store((o0 * inv_l).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so0[0], coords=(((hbl // H) * tiles_m + mtl) * 2, hbl % H))
        Lse.store((m0 + lm.log2(l0)) * 0.6931471805599453, coords=(hbl, mtl * 2))
        lm.wait(turn0)                            # warpgroup 1's last turn

    with wg1:
        lm.arrive(turn0)                          # warpgroup 0 issues first
        o1 = 0.0                                    # read first by tile 0's empty epilogue
        m1 = -lm.inf
        l1 = 0.0
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            i = t // lm.num_blocks(0)                 # this CTA's i-th tile
            full_round = (i + 1) * lm.num_blocks(0) <= tiles
            back = (i + 1) * lm.num_blocks(0) - 1 - lm.block_id(0)  # odd rounds: from the end
            u = (back if (i % 2 == 1 and full_round) else t) % tiles  # < tiles (launch metadata)
            mt = tiles_m - 1 - u // heads             # the last query tiles (causal: longest) first
            seen = lm.min(kv_blocks, lm.cdiv(mt * 128 + 128 + Sk - Sq, 128))  # up to the diagonal
            n_blocks = lm.max(seen if causal == 1 else kv_blocks, 1)  # ≥ 1: O is written (0)
            ring = i * kv_blocks                      # the K/V ring position of block 0
            s_0 = ring % 2
            qs = i % 2
            diag = mt * 128 + 64 + Sk - Sq             # the last key row 0 of these rows sees
            last = diag if causal == 1 else Sk
            lm.wait(q_full, stage=qs)
            # Block 0: S_0 is issued in this warpgroup's turn, and the tile before is stored
            # while it runs.
            lm.wait(k_full, stage=s_0)
            lm.wait(turn1)
            lm.mma(s1, sq1[qs], sk[s_0], init=True)
            lm.arrive(turn0)
            # The epilogue of this CTA's tile before (its index arithmetic again, for tile
            # t − num_blocks): O normalised, staged and copied out by TMA (not waited for),
            # lse stored; tile 0's are aimed past the tensors' ends (nothing is written).
            tp = lm.max(t - lm.num_blocks(0), 0)           # (tile 0: any tile in range)
            up = ((i * lm.num_blocks(0) - 1 - lm.block_id(0)) if (i % 2 == 0 and
                  i * lm.num_blocks(0) <= tiles) else tp) % tiles
            mtp = tiles_m - 1 - up // heads
            hbp = up % heads
            inv_lp = lm.where(l1 > 0.0, 1.0 / l1, 0.0)
            so1[0].store((o1 * inv_lp).to(lm.bf16))       # waits for the last P·V only
            lm.fence_proxy()
            O.tma_store(so1[0], coords=((((hbp // H) * tiles_m + mtp) * 2 + 1) if i > 0
                                        else B * tiles_m * 2, hbp % H))
            Lse.store((m1 + lm.log2(l1)) * 0.6931471805599453,
                      coords=(hbp if i > 0 else B * H, mtp * 2 + 1))
            if 127 >= Sk or (causal == 1 and 127 > diag):
                lim0 = lm.min(lm.row_index(s1, base=last), Sk - 1)  # each row's last key
                s1 = lm.where(lm.col_index(s1) > lim0, -lm.inf, s1)
            m1 = s1.max(axis=1) * scale_log2
            m_use0 = lm.where(m1 == -lm.inf, 0.0, m1)          # a row that sees no key yet
            p1 = lm.exp2(s1 * scale_log2 - m_use0)             # exp2(−inf) = 0 where masked
            l1 = p1.sum(axis=1)
            lm.arrive(k_empty, stage=s_0)
            # Block j: S_j is issued, then P_(j-1)·V_(j-1) behind it, so the softmax of S_j runs
            # while that wgmma does; O is rescaled once it has retired.
            for j in lm.range(1, n_blocks):
                s = (ring + j) % 2
                lm.wait(k_full, stage=s)
                lm.wait(turn1)
                lm.mma(s1, sq1[qs], sk[s], init=True)
                lm.wait(v_full, stage=1 - s)
                lm.mma(o1, p1.to(lm.bf16), sv[1 - s].T, init=(j == 1))
                lm.arrive(turn0)
                if j * 128 + 127 >= Sk or (causal == 1 and j * 128 + 127 > diag):
                    # each row's last key, counted from this block's first
                    lim = lm.min(lm.row_index(s1, base=last - j * 128), Sk - 1 - j * 128)
                    s1 = lm.where(lm.col_index(s1) > lim, -lm.inf, s1)
                m_new = lm.max(m1, s1.max(axis=1) * scale_log2)
                m_use = lm.where(m_new == -lm.inf, 0.0, m_new)
                p1 = lm.exp2(s1 * scale_log2 - m_use)
                alpha = lm.exp2(m1 - m_use)
                l1 = l1 * alpha + p1.sum(axis=1)
                m1 = m_new
                lm.arrive(k_empty, stage=s)                    # S_j has retired
                o1 = o1 * alpha                              # waits for P_(j-1)·V_(j-1)
                lm.commit(v_empty, stage=1 - s)                # (it has: nothing to wait for)
            # The last block's P·V (its O is stored under the next tile's S_0); the last S
            # (which read Q) has retired.
            last_s = (ring + n_blocks - 1) % 2
            lm.wait(v_full, stage=last_s)
            lm.mma(o1, p1.to(lm.bf16), sv[last_s].T, init=(n_blocks == 1))
            lm.commit(v_empty, stage=last_s)                 # once that P·V has completed
            lm.arrive(q_empty, stage=qs)
        # The epilogue of this CTA's last tile (t = block_id + (n − 1)·num_blocks).
        n = lm.cdiv(tiles - lm.block_id(0), lm.num_blocks(0))
        il = n - 1
        tl = lm.block_id(0) + il * lm.num_blocks(0)
        ul = ((n * lm.num_blocks(0) - 1 - lm.block_id(0)) if (il % 2 == 1 and
              n * lm.num_blocks(0) <= tiles) else tl) % tiles
        mtl = tiles_m - 1 - ul // heads
        hbl = ul % heads
        inv_l = lm.where(l1 > 0.0, 1.0 / l1, 0.0)
        so1[0].store((o1 * inv_l).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so1[0], coords=(((hbl // H) * tiles_m + mtl) * 2 + 1, hbl % H))
        Lse.store((m1 + lm.log2(l1)) * 0.6931471805599453, coords=(hbl, mtl * 2 + 1))
