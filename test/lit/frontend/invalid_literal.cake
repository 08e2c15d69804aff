# CAKE-T009: a literal or name outside its closed set: a dtype written as a string, a
# swizzle tag that does not exist, an unknown parameter type, an unknown target.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype="bf16")
    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=96b)
    sc = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128)

@cake.schedule()
def k2(lm, A: LM.tma7d):
    pass

@cake.schedule(target="sm_91")
def k3(lm):
    pass
# CHECK: invalid_literal.cake:7:52: error: `dtype` expects a dtype such as lm.bf16, got a string [CAKE-T009]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0, shape=(64, 64), dtype="bf16")
# CHECK-NEXT: {{^}}                                                   ^~~~~~
# CHECK-NEXT: help: dtypes are lm.bf16, lm.f16, lm.f32, lm.tf32, lm.e4m3, lm.e5m2, lm.i8, lm.i32
# CHECK-NEXT: invalid_literal.cake:8:72: error: invalid swizzle `96b` [CAKE-T009]
# CHECK-NEXT: {{^}}    sb = pool.view(offset=8192, shape=(64, 64), dtype=lm.bf16, swizzle=96b)
# CHECK-NEXT: {{^}}                                                                       ^~~
# CHECK-NEXT: help: swizzle tags are 32b, 64b, 128b, or None for no swizzle; omit `swizzle=` to let the compiler choose
# CHECK-NEXT: invalid_literal.cake:9:73: error: invalid swizzle `128` [CAKE-T009]
# CHECK-NEXT: {{^}}    sc = pool.view(offset=16384, shape=(64, 64), dtype=lm.bf16, swizzle=128)
# CHECK-NEXT: {{^}}                                                                        ^~~
# CHECK-NEXT: help: swizzle tags are 32b, 64b, 128b, or None for no swizzle; omit `swizzle=` to let the compiler choose
# CHECK-NEXT: invalid_literal.cake:12:15: error: unknown parameter type `LM.tma7d` [CAKE-T009]
# CHECK-NEXT: {{^}}def k2(lm, A: LM.tma7d):
# CHECK-NEXT: {{^}}              ^~~~~~~~
# CHECK-NEXT: help: did you mean `tma5d`?
# CHECK-NEXT: invalid_literal.cake:15:23: error: unknown target `sm_91` [CAKE-T009]
# CHECK-NEXT: {{^}}@cake.schedule(target="sm_91")
# CHECK-NEXT: {{^}}                      ^~~~~~~
# CHECK-NEXT: help: known targets: sm_80, sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a
# CHECK-NOT: error
