# CAKE-T008: a runtime value where a compile-time constant is required (sizes, warp lists);
# the note shows where the runtime value comes from.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    pool = lm.smem(n)
    tiles = lm.cdiv(n, 128)
    pipe = lm.pipeline(stages=tiles)
    load = lm.role(warps=[0, n])
# CHECK: not_constant.cake:6:20: error: `bytes` must be a compile-time constant, got a runtime integer [CAKE-T008]
# CHECK-NEXT: {{^}}    pool = lm.smem(n)
# CHECK-NEXT: {{^}}                   ^
# CHECK-NEXT: not_constant.cake:5:11: note: this value is only known at run time
# CHECK-NEXT: {{^}}def k(lm, n: LM.i32):
# CHECK-NEXT: {{^}}          ^
# CHECK-NEXT: not_constant.cake:8:31: error: `stages` must be a compile-time constant, got a runtime integer [CAKE-T008]
# CHECK-NEXT: {{^}}    pipe = lm.pipeline(stages=tiles)
# CHECK-NEXT: {{^}}                              ^~~~~
# CHECK-NEXT: not_constant.cake:7:5: note: this value is only known at run time
# CHECK-NEXT: {{^}}    tiles = lm.cdiv(n, 128)
# CHECK-NEXT: {{^}}    ^~~~~
# CHECK-NEXT: not_constant.cake:9:30: error: `warps` entries must be integer constants, got a runtime integer [CAKE-T008]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, n])
# CHECK-NEXT: {{^}}                             ^
# CHECK-NOT: error
