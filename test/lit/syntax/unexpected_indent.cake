# CAKE-P003: a line indented deeper than its block.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
        mma = lm.role(warps=[1])
# CHECK: unexpected_indent.cake:6:9: error: unexpected indent [CAKE-P003]
# CHECK-NEXT: {{^}}        mma = lm.role(warps=[1])
# CHECK-NEXT: {{^}}        ^~~
# CHECK-NEXT: help: indent only the body of a `def`, `with`, `for` or `if`
# CHECK-NOT: error
