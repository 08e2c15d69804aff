# CAKE-T003: `lm.NAME` that is not a builtin or dtype, with a suggestion when one is close.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pipe = lm.pipline(stages=2)
    t = lm.threadIdx()
    dt = lm.bf61
# CHECK: unknown_builtin.cake:5:12: error: unknown builtin `lm.pipline` [CAKE-T003]
# CHECK-NEXT: {{^}}    pipe = lm.pipline(stages=2)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~
# CHECK-NEXT: help: did you mean `pipeline`?
# CHECK-NEXT: unknown_builtin.cake:6:9: error: unknown builtin `lm.threadIdx` [CAKE-T003]
# CHECK-NEXT: {{^}}    t = lm.threadIdx()
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~
# CHECK-NEXT: unknown_builtin.cake:7:10: error: unknown builtin `lm.bf61` [CAKE-T003]
# CHECK-NEXT: {{^}}    dt = lm.bf61
# CHECK-NEXT: {{^}}         ^~~~~~~
# CHECK-NEXT: help: did you mean `bf16`?
# CHECK-NOT: error
