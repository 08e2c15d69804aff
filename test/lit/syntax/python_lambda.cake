# CAKE-P001: `lambda` is refused where it stands, also inside an expression (was `unexpected
# ':'`), with what to write instead.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    f = n + 1 if n > 0 else lambda x: x
# CHECK: python_lambda.cake:6:29: error: `lambda` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}    f = n + 1 if n > 0 else lambda x: x
# CHECK-NEXT: {{^}}                            ^~~~~~
# CHECK-NEXT: help: Cake has no user functions
# CHECK-NOT: error
