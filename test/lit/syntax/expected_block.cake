# CAKE-P003: a block header followed by a line that is not indented.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    with load:
    lm.fence_proxy()
# CHECK: expected_block.cake:7:5: error: expected an indented block [CAKE-P003]
# CHECK-NEXT: {{^}}    lm.fence_proxy()
# CHECK-NEXT: {{^}}    ^~
# CHECK-NEXT: help: indent the body of the block on the lines after the `:`
# CHECK-NOT: error
