# CAKE-S060: a TMA store reads its stage asynchronously, until its role next writes the stage
# or arrives for a role that does. Here the out role copies so[0] out and arrives on `handoff`,
# whose consumer (the relay role) writes no SMEM, so that arrival does not wait for the copy;
# the relay role then arrives on `empty`, and the load role refills so[0] after waiting on it:
# the refill races the copy's read.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def relay(lm, C: LM.tma2d, O: LM.tma2d):
    pool = lm.smem(32768)
    so = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    relay = lm.role(warps=[1])
    out = lm.role(warps=[4])
    full = lm.barrier(count=1, prod=[load], cons=[out])
    handoff = lm.barrier(count=1, prod=[out], cons=[relay])
    empty = lm.barrier(count=1, prod=[relay], cons=[load])
    with load:
        so.tma_load(C, coords=(0, 0), barrier=full)
        lm.wait(empty)
        so.tma_load(C, coords=(1, 0), barrier=full)
    with relay:
        lm.wait(handoff)
        lm.arrive(empty)
    with out:
        lm.wait(full)
        O.tma_store(so[0], coords=(0, 0))
        lm.arrive(handoff)
        lm.wait(full)
        O.tma_store(so[0], coords=(1, 0))
# CHECK: overwrite_other_role.cake:20:9: error: role load refills so[0] at line 20 while the `tma_store` of role out at line 26 may still be reading it: a TMA store reads its stage asynchronously, until role out next writes those bytes or arrives for a role that does (where it waits for its stores) [CAKE-S060]
# CHECK-NEXT: {{^}}        so.tma_load(C, coords=(1, 0), barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: overwrite_other_role.cake:26:9: note: role out copies so[0] out here; the copy goes on after the `tma_store` returns
# CHECK-NEXT: {{^}}        O.tma_store(so[0], coords=(0, 0))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: overwrite_other_role.cake:27:9: note: this `lm.arrive` does not wait for the copy to read the stage
# CHECK-NEXT: {{^}}        lm.arrive(handoff)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: let role out arrive on a barrier that role load waits on before it rewrites the stage (that arrival waits for the copy), or stage the tile in SMEM no other role writes
# CHECK-NOT: error
