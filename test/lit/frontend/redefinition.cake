# CAKE-T002: Cake names are single-assignment; the builder handle cannot be rebound; a
# parameter name cannot repeat (reported per kernel, so the second kernel is checked too).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    load = lm.role(warps=[0])
    load = lm.role(warps=[1])
    lm = 3
    n = 4

@cake.schedule()
def k2(lm, A: LM.tma2d, A: LM.i32):
    pass
# CHECK: redefinition.cake:7:5: error: `load` is already defined [CAKE-T002]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[1])
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: redefinition.cake:6:5: note: `load` was defined here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0])
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: help: Cake names are single-assignment: choose a new name
# CHECK-NEXT: redefinition.cake:8:5: error: `lm` is the builder handle and cannot be rebound [CAKE-T002]
# CHECK-NEXT: {{^}}    lm = 3
# CHECK-NEXT: {{^}}    ^~
# CHECK-NEXT: redefinition.cake:9:5: error: `n` is already defined [CAKE-T002]
# CHECK-NEXT: {{^}}    n = 4
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: redefinition.cake:5:11: note: `n` was defined here
# CHECK-NEXT: {{^}}def k(lm, n: LM.i32):
# CHECK-NEXT: {{^}}          ^
# CHECK-NEXT: help: Cake names are single-assignment: choose a new name
# CHECK-NEXT: redefinition.cake:12:25: error: parameter `A` is defined twice [CAKE-T002]
# CHECK-NEXT: {{^}}def k2(lm, A: LM.tma2d, A: LM.i32):
# CHECK-NEXT: {{^}}                        ^
# CHECK-NEXT: redefinition.cake:12:12: note: first defined here
# CHECK-NEXT: {{^}}def k2(lm, A: LM.tma2d, A: LM.i32):
# CHECK-NEXT: {{^}}           ^
# CHECK-NOT: error
