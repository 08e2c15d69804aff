# The planted shared-memory race of `cakec run --sanitize racecheck` (bug class missing_fence,
# made from examples/chain_sm80.cake): the role's warps store their rows of the A and B stages
# and each warp's mma.sync reads (ldmatrix) rows the other warps wrote with no sync between:
# a read-after-write hazard between two warps' own accesses that racecheck sees (plain stores
# and ldmatrix, ordered in the correct kernel by a named barrier it understands, unlike a
# cp.async arrival: bench/broken/sm80_early_release.cake). `cakec verify` rejects it
# (CAKE-D009); `cakec run --unchecked --sanitize racecheck` runs it.
@cake.schedule(target="sm_80")
def sm80_missing_fence(lm, A: LM.tensor2d, B: LM.tensor2d, D: LM.tensor2d, O: LM.tensor2d, M: LM.i32,
                        K: LM.i32):
    lm.grid(lm.cdiv(M, 64))
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16)
    sd = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16)
    se = pool.view(offset=24576, shape=(64, 64), dtype=lm.bf16)
    math = lm.role(warps=[0, 1, 2, 3])
    acc = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    out = lm.regs(shape=(64, 64), dtype=lm.f32, role=math)
    with math:
        mt = lm.block_id(0)
        d = D.load(coords=(0, 0), shape=(64, 64), dtype=lm.bf16)
        sd[0].store(d.to(lm.bf16))
        for k in lm.range(0, lm.max(lm.cdiv(K, 64), 1)):
            lm.fence_proxy()                       # every warp has read the last step's stages
            a = A.load(coords=(mt, k), shape=(64, 64), dtype=lm.bf16)
            sa[0].store(a.to(lm.bf16))
            b = B.load(coords=(0, k), shape=(64, 64), dtype=lm.bf16)
            sb[0].store(b.to(lm.bf16))           # the bug: no lm.fence_proxy() after the stores
            lm.mma(acc, sa, sb, init=(k == 0))
        se[0].store(acc.to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(mt, 0))
