# CAKE-T001 beyond a typo: a name local to a role block or loop used outside it, and the
# annotation namespace `LM` / decorator namespace `cake` used as values.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    load = lm.role(warps=[0])
    with load:
        for i in lm.range(0, n):
            step = i * 2
    later = step + 1
    dt = LM.bf16
    c = cake.schedule
# CHECK: name_scope.cake:10:13: error: `step` is not visible here [CAKE-T001]
# CHECK-NEXT: {{^}}    later = step + 1
# CHECK-NEXT: {{^}}            ^~~~
# CHECK-NEXT: name_scope.cake:9:13: note: `step` is defined inside the loop at line 8 and is local to it
# CHECK-NEXT: {{^}}            step = i * 2
# CHECK-NEXT: {{^}}            ^~~~
# CHECK-NEXT: help: define it at kernel level to share it between blocks
# CHECK-NEXT: name_scope.cake:11:10: error: `LM` may only appear in parameter annotations [CAKE-T001]
# CHECK-NEXT: {{^}}    dt = LM.bf16
# CHECK-NEXT: {{^}}         ^~
# CHECK-NEXT: help: use `lm.…` for builtins
# CHECK-NEXT: name_scope.cake:12:9: error: `cake` may only appear in the decorator [CAKE-T001]
# CHECK-NEXT: {{^}}    c = cake.schedule
# CHECK-NEXT: {{^}}        ^~~~
# CHECK-NOT: error
