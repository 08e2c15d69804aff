# An mbarrier's arrival count has 20 bits.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    ready = lm.barrier(count=1, prod=[load], cons=[use], init_count=2000000)
# CHECK: barrier_count.cake:7:13: error: barrier `ready` expects 2000000 arrivals per phase; an mbarrier counts at most 1048575 arrivals [CAKE-H016]
# CHECK-NEXT: {{^}}    ready = lm.barrier(count=1, prod=[load], cons=[use], init_count=2000000)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: lower `init_count` to the arrivals one phase receives
