# `blocks_per_sm=N` (the launch bound's minimum of resident blocks): N blocks' threads and
# shared memory must fit one SM (H019), and the roles' `regs=` budgets the 65536 / N
# registers a block then gets (H008: 128 a thread at two blocks of 256 threads).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a", blocks_per_sm=3)
def k(lm):
    pool = lm.smem(81920)
    sa = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    math = lm.role(warps=[0, 1, 2, 3])

@cake.schedule(target="sm_90a", blocks_per_sm=6)
def k2(lm):
    math = lm.role(warps=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])

@cake.schedule(target="sm_90a", blocks_per_sm=2)
def k3(lm):
    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
# CHECK: blocks_per_sm.cake:6:5: error: `blocks_per_sm=3` needs 3 × 83952 bytes of shared memory (with the system's reservation), more than the 233472 of one SM on sm_90a [CAKE-H019]
# CHECK-NEXT: {{^}}def k(lm):
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: blocks_per_sm.cake:7:12: note: pool `pool` takes 81920 bytes per block
# CHECK-NEXT: {{^}}    pool = lm.smem(81920)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~
# CHECK-NEXT: help: use `blocks_per_sm=2` or less, or shrink the block
# CHECK-NEXT: blocks_per_sm.cake:12:5: error: `blocks_per_sm=6` needs 6 × 384 threads, more than the 2048 one SM holds on sm_90a [CAKE-H019]
# CHECK-NEXT: {{^}}def k2(lm):
# CHECK-NEXT: {{^}}    ^~
# CHECK-NEXT: help: use `blocks_per_sm=5` or less, or shrink the block
# CHECK-NEXT: blocks_per_sm.cake:18:12: error: the roles' `regs=` budgets add up to 34816 registers (`load` 40 × 128 + `math` 232 × 128 threads), more than the 32768 a block of 256 threads holds on sm_90a (128 per thread at launch; setmaxnreg.inc only takes what the block's other warpgroups released, and waits for it) [CAKE-H008]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[4, 5, 6, 7], regs=232)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: blocks_per_sm.cake:17:12: note: `load` asks for 40 per thread here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1, 2, 3], regs=40)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
# CHECK-NEXT: help: lower `regs=` on some role so that the sum of regs × threads fits
# CHECK-NOT: error
