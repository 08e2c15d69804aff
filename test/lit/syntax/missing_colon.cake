# CAKE-P001: a block header without its colon.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    with load
        lm.fence_proxy()
# CHECK: missing_colon.cake:6:14: error: unexpected end of line; expected `:` [CAKE-P001]
# CHECK-NEXT: {{^}}    with load
# CHECK-NEXT: {{^}}             ^
# CHECK-NEXT: help: a `def`, `with`, `for` or `if` line ends with `:`
# CHECK-NOT: error
