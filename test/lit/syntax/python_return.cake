# CAKE-P001: `return` (bare or with a value) is not Cake; before the fix a bare `return`
# parsed as a name and was reported as `undefined name return` (CAKE-T001).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    x = n + 1
    return
# CHECK: python_return.cake:7:5: error: `return` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}    return
# CHECK-NEXT: {{^}}    ^~~~~~
# CHECK-NEXT: help: kernels return nothing; results are stored with `tma_store`
# CHECK-NOT: error
