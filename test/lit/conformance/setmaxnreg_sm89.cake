# `regs=` lowers to setmaxnreg, which Ada (sm_89) does not have.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_89")
def k(lm):
    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7])
# CHECK: setmaxnreg_sm89.cake:5:12: error: `regs=` on role `load` needs setmaxnreg, which sm_89 does not have [CAKE-H006]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1, 2, 3], regs=40)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: remove `regs=`, or target sm_90a, sm_100a, sm_103a, sm_120a or sm_121a
