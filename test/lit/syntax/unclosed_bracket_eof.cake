# CAKE-P001: a bracket still open at the end of the file is reported where it opens.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pool = lm.smem(65536)
    load = lm.role(warps=[0, 1,
# CHECK: unclosed_bracket_eof.cake:6:26: error: `[` is never closed [CAKE-P001]
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0, 1,
# CHECK-NEXT: {{^}}                         ^
# CHECK-NEXT: help: close it with `]`
# CHECK-NOT: error
