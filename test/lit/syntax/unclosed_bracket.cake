# CAKE-P001: a bracket left open swallows the next line; the note points at it.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0]
    mma = lm.role(warps=[1])
# CHECK: unclosed_bracket.cake:6:5: error: unexpected name `mma`; expected `)` or `,` [CAKE-P001]
# CHECK-NEXT: {{^}}    mma = lm.role(warps=[1])
# CHECK-NEXT: {{^}}    ^~~
# CHECK-NEXT: unclosed_bracket.cake:5:19: note: `(` opened here is still open
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0]
# CHECK-NEXT: {{^}}                  ^
# CHECK-NEXT: help: close it with `)`
# CHECK-NOT: error
