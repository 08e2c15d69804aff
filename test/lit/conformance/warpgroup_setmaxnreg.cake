# setmaxnreg applies to a whole warpgroup: a one-warp role cannot set `regs=`.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def k(lm):
    load = lm.role(warps=[0], regs=40)
    math = lm.role(warps=[4, 5, 6, 7], regs=232)
# CHECK: warpgroup_setmaxnreg.cake:5:12: error: role `load` sets `regs=` (setmaxnreg), which runs on whole warpgroups, but its warps [0] are not groups of 4 consecutive warps starting at a multiple of 4 [CAKE-H005]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0], regs=40)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give role `load` aligned warps, e.g. [0, 1, 2, 3]
