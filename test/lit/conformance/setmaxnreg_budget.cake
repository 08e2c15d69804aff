# The roles' register budgets must fit what the launch gives the block (here 384 × 168).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0, 1, 2, 3], regs=120)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=240)
# CHECK: setmaxnreg_budget.cake:6:12: error: the roles' `regs=` budgets add up to 76800 registers (`load` 120 × 128 + `math` 240 × 256 threads), more than the 64512 a block of 384 threads holds on sm_90a (168 per thread at launch; setmaxnreg.inc only takes what the block's other warpgroups released, and waits for it) [CAKE-H008]
# CHECK-NEXT: {{^}}    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=240)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: setmaxnreg_budget.cake:5:12: note: `load` asks for 120 per thread here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1, 2, 3], regs=120)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: lower `regs=` on some role so that the sum of regs × threads fits
