# CAKE-T012: Python that parses but is not Cake: a statement outside the kernel, an
# expression whose value is dropped, augmented assignment, a nested function.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
tile = 128

@cake.schedule()
def k(lm, n: LM.i32):
    n + 1
    count = 0
    count += 1
    def helper(x):
        pass
# CHECK: not_cake.cake:4:1: error: only `@cake.schedule` kernel definitions may appear at the top level of a .cake file [CAKE-T012]
# CHECK-NEXT: {{^}}tile = 128
# CHECK-NEXT: {{^}}^~~~
# CHECK-NEXT: help: put this statement inside the kernel's body
# CHECK-NEXT: not_cake.cake:8:5: error: this expression has no effect [CAKE-T012]
# CHECK-NEXT: {{^}}    n + 1
# CHECK-NEXT: {{^}}    ^~~~~
# CHECK-NEXT: help: assign it to a name or remove it
# CHECK-NEXT: not_cake.cake:10:5: error: augmented assignment `+=` is not supported [CAKE-T012]
# CHECK-NEXT: {{^}}    count += 1
# CHECK-NEXT: {{^}}    ^~~~~~~~~~
# CHECK-NEXT: help: Cake names are single-assignment: bind a new name
# CHECK-NEXT: not_cake.cake:11:9: error: nested function definitions are not part of Cake [CAKE-T012]
# CHECK-NEXT: {{^}}    def helper(x):
# CHECK-NEXT: {{^}}        ^~~~~~
# CHECK-NEXT: help: Cake has no user functions: write the schedule inline
# CHECK-NOT: error
