# CAKE-H018: a barrier that is waited on has at most 64 mbarriers (the lowering keeps a role's
# wait parities of one barrier in a 64-bit register), refused at verify time, and `cakec emit`
# refuses it with the same diagnostic instead of failing inside the emitter.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
# RUN: not cakec emit %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    ready = lm.barrier(count=65, prod=[load], cons=[use])
    with load:
        lm.arrive(ready, stage=64)
    with use:
        lm.wait(ready, stage=64)
# The protocol model does not simulate it either (its clocks grow with the count), and says so.
# CHECK: waited_mbarriers.cake:7:5: warning: the barrier protocol of `k` was checked only in part: barrier `ready` has 65 mbarriers and is waited on, more than the 64 a waited barrier may have [CAKE-S020]
# CHECK: waited_mbarriers.cake:10:13: error: barrier `ready` has 65 mbarriers and is waited on; code generation tracks the wait parities of at most 64 mbarriers per barrier [CAKE-H018]
# CHECK-NEXT: {{^}}    ready = lm.barrier(count=65, prod=[load], cons=[use])
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: waited_mbarriers.cake:14:9: note: `ready` is waited on here
# CHECK-NEXT: {{^}}        lm.wait(ready, stage=64)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: give `ready` at most 64 stages (`count=`); a ring needs no more stages than it has buffers in flight
# CHECK-NOT: error
