# CAKE-P003: a kernel header with no body at all.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
# CHECK: empty_kernel.cake:4:11: error: expected an indented block [CAKE-P003]
# CHECK-NEXT: {{^}}def k(lm):
# CHECK-NEXT: {{^}}          ^
# CHECK-NEXT: help: indent the body of the block on the lines after the `:`
# CHECK-NOT: error
