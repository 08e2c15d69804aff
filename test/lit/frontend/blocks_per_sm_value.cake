# CAKE-T007: `blocks_per_sm=` takes a positive integer literal.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a", blocks_per_sm=0)
def k(lm):
    pass
# CHECK: blocks_per_sm_value.cake:3:47: error: `blocks_per_sm` must be a positive integer literal such as 2 [CAKE-T007]
# CHECK-NEXT: {{^}}@cake.schedule(target="sm_90a", blocks_per_sm=0)
# CHECK-NEXT: {{^}}                                              ^
# CHECK-NEXT: help: the blocks the launch keeps resident on one SM (`__launch_bounds__(threads, blocks_per_sm)`)
# CHECK-NOT: error
