# CAKE-T010: values out of range: non-positive shapes, arguments below their minimum,
# constants that do not fit in 32 bits, division by zero (also by a constant zero with a
# runtime dividend), exponents, grid dimensions, tensor-shape and tuple indices, loop steps.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d, n: LM.i32):
    pool = lm.smem(0)
    acc = lm.tmem(cols=0, width=128, shape=(128, -1), dtype=lm.f32)
    big = lm.smem(2 ** 40)
    load = lm.role(warps=[-1])
    q = n // 0
    c = lm.cdiv(n, 0)
    e = 2 ** 65
    lm.grid(0)
    b = lm.block_id(3)
    d = A.shape[2]
    t = (1, 2)[5]
    mma = lm.role(warps=[1])
    with mma:
        for i in lm.range(0, 4, 0):
            pass
# CHECK: value_range.cake:7:20: error: `bytes` must be at least 1, got 0 [CAKE-T010]
# CHECK-NEXT: {{^}}    pool = lm.smem(0)
# CHECK-NEXT: {{^}}                   ^
# CHECK-NEXT: value_range.cake:8:50: error: `shape` dimensions must be positive, got -1 [CAKE-T010]
# CHECK-NEXT: {{^}}    acc = lm.tmem(cols=0, width=128, shape=(128, -1), dtype=lm.f32)
# CHECK-NEXT: {{^}}                                                 ^~
# CHECK-NEXT: value_range.cake:9:19: error: `bytes` = 1099511627776 does not fit in 32 bits [CAKE-T010]
# CHECK-NEXT: {{^}}    big = lm.smem(2 ** 40)
# CHECK-NEXT: {{^}}                  ^~~~~~~
# CHECK-NEXT: value_range.cake:10:27: error: `warps` entries must be non-negative, got -1 [CAKE-T010]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[-1])
# CHECK-NEXT: {{^}}                          ^~
# CHECK-NEXT: value_range.cake:11:14: error: division by zero [CAKE-T010]
# CHECK-NEXT: {{^}}    q = n // 0
# CHECK-NEXT: {{^}}             ^
# CHECK-NEXT: value_range.cake:12:20: error: division by zero [CAKE-T010]
# CHECK-NEXT: {{^}}    c = lm.cdiv(n, 0)
# CHECK-NEXT: {{^}}                   ^
# CHECK-NEXT: value_range.cake:13:9: error: `**` takes a non-negative integer exponent up to 64 [CAKE-T010]
# CHECK-NEXT: {{^}}    e = 2 ** 65
# CHECK-NEXT: {{^}}        ^~~~~~~
# CHECK-NEXT: value_range.cake:14:13: error: grid dimensions must be at least 1 [CAKE-T010]
# CHECK-NEXT: {{^}}    lm.grid(0)
# CHECK-NEXT: {{^}}            ^
# CHECK-NEXT: value_range.cake:15:21: error: grid dimension must be 0, 1 or 2 [CAKE-T010]
# CHECK-NEXT: {{^}}    b = lm.block_id(3)
# CHECK-NEXT: {{^}}                    ^
# CHECK-NEXT: value_range.cake:16:17: error: `A` has rank 2; index 2 is out of range [CAKE-T010]
# CHECK-NEXT: {{^}}    d = A.shape[2]
# CHECK-NEXT: {{^}}                ^
# CHECK-NEXT: value_range.cake:17:16: error: tuple index out of range [CAKE-T010]
# CHECK-NEXT: {{^}}    t = (1, 2)[5]
# CHECK-NEXT: {{^}}               ^
# CHECK-NEXT: value_range.cake:20:33: error: `step` must be at least 1, got 0 [CAKE-T010]
# CHECK-NEXT: {{^}}        for i in lm.range(0, 4, 0):
# CHECK-NEXT: {{^}}                                ^
# CHECK-NOT: error
