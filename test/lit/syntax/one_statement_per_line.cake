# CAKE-P001: a block body on the header line.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    with load: lm.fence_proxy()
# CHECK: one_statement_per_line.cake:6:16: error: unexpected name `lm`; expected end of line [CAKE-P001]
# CHECK-NEXT: {{^}}    with load: lm.fence_proxy()
# CHECK-NEXT: {{^}}               ^~
# CHECK-NEXT: help: one statement per line; a block starts on the line after `:`
# CHECK-NOT: error
