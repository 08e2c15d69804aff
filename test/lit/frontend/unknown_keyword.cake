# CAKE-T005: unknown keyword arguments, for a builtin (with a suggestion) and the decorator.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_cnt=1)
    pipe = lm.pipeline(stages=2, depth=4)

@cake.schedule(arch="sm_90a")
def k2(lm):
    pass
# CHECK: unknown_keyword.cake:7:57: error: unknown keyword argument `init_cnt` for `lm.barrier` [CAKE-T005]
# CHECK-NEXT: {{^}}    full = lm.barrier(count=2, prod=[load], cons=[mma], init_cnt=1)
# CHECK-NEXT: {{^}}                                                        ^~~~~~~~
# CHECK-NEXT: help: did you mean `init_count`?
# CHECK-NEXT: unknown_keyword.cake:8:34: error: unknown keyword argument `depth` for `lm.pipeline` [CAKE-T005]
# CHECK-NEXT: {{^}}    pipe = lm.pipeline(stages=2, depth=4)
# CHECK-NEXT: {{^}}                                 ^~~~~
# CHECK-NEXT: help: it takes `stages`
# CHECK-NEXT: unknown_keyword.cake:10:16: error: unknown keyword argument `arch` for `@cake.schedule` [CAKE-T005]
# CHECK-NEXT: {{^}}@cake.schedule(arch="sm_90a")
# CHECK-NEXT: {{^}}               ^~~~~~~~~~~~~
# CHECK-NEXT: help: the options are `target=`, `blocks_per_sm=` and `cluster=`
# CHECK-NOT: error
