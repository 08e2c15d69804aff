# A wgmma ring whose B stage is filled by a multicast copy but released by a local
# `lm.commit`: the peer's next copy may overwrite the stage while this CTA's MMAs still read
# it (S045); the help names the commit's multicast form. The near miss is
# commit_multicast.cake.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def k(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    lm.grid(4)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    with load:
        for kt in lm.range(0, k_tiles):
            lm.wait(empty, stage=kt % 4)
            sa.tma_load(A, coords=(lm.block_id(0), kt), stage=kt % 4, barrier=full)
            sb.tma_load(B, coords=(0, kt), stage=kt % 4, barrier=full, multicast=0)
    with math:
        for kt in lm.range(0, k_tiles):
            s = kt % 4
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(kt == 0))
            lm.commit(empty, stage=s)
        C.tma_store(acc.to(lm.bf16), coords=(lm.block_id(0), 0))
    lm.cluster_sync()
# CHECK: commit_local.cake:29:13: error: this releases a stage of `empty` in this block only, but `sb` is filled by a copy multicast to every block along x (line 23) once `empty` says the stage is free: a peer may overwrite the stage while this block still reads it [CAKE-S045]
# CHECK-NEXT: {{^}}            lm.commit(empty, stage=s)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK: {{^}}help: release it to every member: `lm.commit(empty, stage=..., multicast=0)`
# CHECK-NOT: error
