# CAKE-P003: a line dedented to a column no enclosing block uses.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    with load:
        lm.fence_proxy()
  pass
# CHECK: dedent_mismatch.cake:8:3: error: unindent does not match any outer indentation level [CAKE-P003]
# CHECK-NEXT: {{^}}  pass
# CHECK-NEXT: {{^}}  ^~~~
# CHECK-NOT: error
