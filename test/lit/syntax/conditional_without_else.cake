# CAKE-P001: a conditional expression needs its `else`.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    last = n - 1 if n > 0
# CHECK: conditional_without_else.cake:5:26: error: unexpected end of line; expected `else` [CAKE-P001]
# CHECK-NEXT: {{^}}    last = n - 1 if n > 0
# CHECK-NEXT: {{^}}                         ^
# CHECK-NOT: error
