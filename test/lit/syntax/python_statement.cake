# CAKE-P001: Python statements that are not Cake are named, with what to write instead.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    while n > 0:
        pass
# CHECK: python_statement.cake:5:5: error: `while` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}    while n > 0:
# CHECK-NEXT: {{^}}    ^~~~~
# CHECK-NEXT: help: Cake loops are `for NAME in lm.range(start, stop):`
# CHECK-NOT: error
