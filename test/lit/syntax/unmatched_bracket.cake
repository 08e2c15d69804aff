# CAKE-P001: a closing bracket that closes nothing.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pool = lm.smem(65536))
# CHECK: unmatched_bracket.cake:5:26: error: unmatched `)` [CAKE-P001]
# CHECK-NEXT: {{^}}    pool = lm.smem(65536))
# CHECK-NEXT: {{^}}                         ^
# CHECK-NEXT: help: remove it
# CHECK-NOT: error
