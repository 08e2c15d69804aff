# CAKE-T002 on a loop variable that reuses a name: reported once, the loop body is still
# checked (`ful`), and the statements after the loop are back at kernel level (no
# "must be at kernel level" cascade for `pool`).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    full = lm.barrier(count=1, prod=[load], cons=[load])
    for load in lm.range(3):
        with load:
            lm.arrive(ful)
    pool = lm.smem(1024)
# CHECK: loop_variable_redefined.cake:9:9: error: `load` is already defined [CAKE-T002]
# CHECK-NEXT: {{^}}    for load in lm.range(3):
# CHECK-NEXT: {{^}}        ^~~~
# CHECK-NEXT: loop_variable_redefined.cake:7:5: note: `load` was defined here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0])
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: help: Cake names are single-assignment: choose a new name
# CHECK-NEXT: loop_variable_redefined.cake:11:23: error: undefined name `ful` [CAKE-T001]
# CHECK-NEXT: {{^}}            lm.arrive(ful)
# CHECK-NEXT: {{^}}                      ^~~
# CHECK-NEXT: help: did you mean `full`?
# CHECK-NOT: error
