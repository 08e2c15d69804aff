# CAKE-P001: a bracket closed by the wrong kind.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    shape = (128, 64]
# CHECK: mismatched_bracket.cake:5:21: error: `]` does not close `(` [CAKE-P001]
# CHECK-NEXT: {{^}}    shape = (128, 64]
# CHECK-NEXT: {{^}}                    ^
# CHECK-NEXT: mismatched_bracket.cake:5:13: note: `(` opened here
# CHECK-NEXT: {{^}}    shape = (128, 64]
# CHECK-NEXT: {{^}}            ^
# CHECK-NEXT: help: close it with `)`
# CHECK-NOT: error
