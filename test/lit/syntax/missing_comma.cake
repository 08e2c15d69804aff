# CAKE-P001: two arguments without a comma between them.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pool = lm.smem(65536)
    sa = pool.view(offset=0 shape=(64, 64), dtype=lm.bf16)
# CHECK: missing_comma.cake:6:29: error: unexpected name `shape`; expected `)` or `,` [CAKE-P001]
# CHECK-NEXT: {{^}}    sa = pool.view(offset=0 shape=(64, 64), dtype=lm.bf16)
# CHECK-NEXT: {{^}}                            ^~~~~
# CHECK-NEXT: help: separate items with `,`
# CHECK-NOT: error
