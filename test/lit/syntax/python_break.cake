# CAKE-P001: `break` inside a loop is not Cake (was CAKE-T001, `undefined name break`).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    for i in lm.range(0, n):
        if i == 3:
            break
# CHECK: python_break.cake:7:13: error: `break` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}            break
# CHECK-NEXT: {{^}}            ^~~~~
# CHECK-NEXT: help: Cake loops run their whole `lm.range`
# CHECK-NOT: error
