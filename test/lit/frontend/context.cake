# CAKE-T011: a construct in the wrong place: a resource declared inside a role block or a
# loop, a role operation at kernel level, nested role blocks, `lm.range` outside a `for`.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[mma], pipeline=pipe)
    lm.wait(full, stage=0)
    r = lm.range(0, 4)
    if 1 == 1:
        pool = lm.smem(1024)
    with load:
        extra = lm.pipeline(stages=2)
        with mma:
            pass
# CHECK: context.cake:10:5: error: `lm.wait` must run inside a `with ROLE:` block [CAKE-T011]
# CHECK-NEXT: {{^}}    lm.wait(full, stage=0)
# CHECK-NEXT: {{^}}    ^~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: wrap it in the role that performs it, e.g. `with load:`
# CHECK-NEXT: context.cake:11:9: error: `lm.range` may only be used as the iterable of a `for` loop [CAKE-T011]
# CHECK-NEXT: {{^}}    r = lm.range(0, 4)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~
# CHECK-NEXT: context.cake:13:16: error: `lm.smem` declares a resource and must be at kernel level [CAKE-T011]
# CHECK-NEXT: {{^}}        pool = lm.smem(1024)
# CHECK-NEXT: {{^}}               ^~~~~~~~~~~~~
# CHECK-NEXT: context.cake:15:17: error: `lm.pipeline` declares a resource and must be at kernel level, not inside a role block [CAKE-T011]
# CHECK-NEXT: {{^}}        extra = lm.pipeline(stages=2)
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: context.cake:14:5: note: inside this role block
# CHECK-NEXT: {{^}}    with load:
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: context.cake:16:9: error: role blocks cannot be nested [CAKE-T011]
# CHECK-NEXT: {{^}}        with mma:
# CHECK-NEXT: {{^}}        ^~~~
# CHECK-NEXT: context.cake:14:5: note: inside this role block
# CHECK-NEXT: {{^}}    with load:
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NOT: error
