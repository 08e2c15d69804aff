# setmaxnreg takes 24..256 registers in steps of 8.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0, 1, 2, 3], regs=100)
    math = lm.role(warps=[4, 5, 6, 7], regs=264)
# CHECK: setmaxnreg_value.cake:5:12: error: role `load` asks for 100 registers per thread; setmaxnreg takes 24 to 256 in steps of 8 [CAKE-H007]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1, 2, 3], regs=100)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use `regs=96`
# CHECK: setmaxnreg_value.cake:6:12: error: role `math` asks for 264 registers per thread; setmaxnreg takes 24 to 256 in steps of 8 [CAKE-H007]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[4, 5, 6, 7], regs=264)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use `regs=256`
