# CAKE-S022: a warp belongs to at most one role (docs/language.md). Warp 4 in both roles:
# the dispatch gives it to `load`, so `math` would never run its first warp's share.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma3d, Csq: LM.tensor2d):
    pool = lm.smem(32768)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[4])
    math = lm.role(warps=[4, 5, 6, 7])
    c_full = lm.barrier(count=1, prod=[load], cons=[math])
    with load:
        sc.tma_load(C, coords=(0, 0, 0), barrier=c_full)
    with math:
        lm.wait(c_full)
        Csq.store(lm.sum_sq(sc, axis=1), coords=(0, 0))
# CHECK: warp_two_roles.cake:9:12: error: warp 4 of role `math` already belongs to role `load`; a warp runs exactly one role [CAKE-S022]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[4, 5, 6, 7])
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: warp_two_roles.cake:8:12: note: `load` is declared here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[4])
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give `math` warps that no other role has
# CHECK-NOT: error
