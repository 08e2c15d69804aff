# CAKE-P001: an operator with nothing after it; the expected set is summarised as "an expression".
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    tiles = n +
# CHECK: expected_expression.cake:5:16: error: unexpected end of line; expected an expression [CAKE-P001]
# CHECK-NEXT: {{^}}    tiles = n +
# CHECK-NEXT: {{^}}               ^
# CHECK-NOT: error
