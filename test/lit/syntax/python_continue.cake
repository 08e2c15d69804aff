# CAKE-P001: `continue` is not Cake (was CAKE-T001, `undefined name continue`).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    for i in lm.range(0, n):
        continue
# CHECK: python_continue.cake:6:9: error: `continue` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}        continue
# CHECK-NEXT: {{^}}        ^~~~~~~~
# CHECK-NEXT: help: Cake loops run their whole `lm.range`
# CHECK-NOT: error
