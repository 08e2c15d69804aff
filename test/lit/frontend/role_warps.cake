# CAKE-T010: a role lists at least one warp, each once (docs/language.md, `lm.role`); both
# verified before (a role of no warps never runs, a repeated warp was counted twice).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    idle = lm.role(warps=[])
    load = lm.role(warps=[0, 1, 0])
    mma = lm.role(warps=[2, 3])
# CHECK: role_warps.cake:6:26: error: a role needs at least one warp [CAKE-T010]
# CHECK-NEXT: {{^}}    idle = lm.role(warps=[])
# CHECK-NEXT: {{^}}                         ^~
# CHECK-NEXT: help: list the warps that run the role, e.g. `warps=[0]`
# CHECK-NEXT: role_warps.cake:7:26: error: warp 0 is listed twice in this role [CAKE-T010]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1, 0])
# CHECK-NEXT: {{^}}                         ^~~~~~~~~
# CHECK-NEXT: help: list each warp of the role once
# CHECK-NOT: error
