# lm.skip's count (docs/language.md): a constant count is at least 0 (CAKE-T010).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def pingpong_count(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, M: LM.i32, K: LM.i32):
    tiles = lm.cdiv(M, 128)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    lm.grid(lm.min(tiles, lm.sm_count()))
    pool = lm.smem(131072)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math0 = lm.role(warps=[4, 5, 6, 7], regs=232)
    math1 = lm.role(warps=[8, 9, 10, 11], regs=232)
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math0, math1], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math0, math1], cons=[load], init_count=1, pipeline=pipe)
    turn0 = lm.barrier(count=1, prod=[math0], cons=[math1])
    turn1 = lm.barrier(count=1, prod=[math1], cons=[math0])
    acc0 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math0)
    acc1 = lm.regs(shape=(128, 128), dtype=lm.f32, role=math1)
    with load:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            for k in lm.range(0, k_tiles):
                s = ((t // lm.num_blocks(0)) * k_tiles + k) % 4
                lm.wait(empty, stage=s)
                sa.tma_load(A, coords=(t, k), stage=s, barrier=full)
                sb.tma_load(B, coords=(0, k), stage=s, barrier=full)
    with math0:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            if j % 2 == 0:
                if j > 0:
                    lm.wait(turn1)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 4
                    lm.wait(full, stage=s)
                    lm.mma(acc0, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn0)
                    lm.commit(empty, stage=s)
                C.tma_store(acc0.to(lm.bf16), coords=(t, 0))
            else:
                lm.skip(full, stage=(j * k_tiles) % 4, count=-1)
    with math1:
        for t in lm.range(lm.block_id(0), tiles, lm.num_blocks(0)):
            j = t // lm.num_blocks(0)
            if j % 2 == 1:
                lm.wait(turn0)
                for k in lm.range(0, k_tiles):
                    s = (j * k_tiles + k) % 4
                    lm.wait(full, stage=s)
                    lm.mma(acc1, sa[s], sb[s], init=(k == 0))
                    if k == k_tiles - 1 and t + lm.num_blocks(0) < tiles:
                        lm.arrive(turn1)
                    lm.commit(empty, stage=s)
                C.tma_store(acc1.to(lm.bf16), coords=(t, 0))
            else:
                lm.skip(full, stage=(j * k_tiles) % 4, count=k_tiles)
# CHECK: skip_count.cake:43:62: error: `count` must be at least 0, got -1 [CAKE-T010]
# CHECK-NEXT: {{^}}                lm.skip(full, stage=(j * k_tiles) % 4, count=-1)
# CHECK-NEXT: {{^}}                                                             ^~
# CHECK-NOT: error
