# CAKE-T001: a name that was never defined; the help suggests the closest defined name.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(1024)
    load = lm.role(warps=[0])
    with lood:
        pass
# CHECK: undefined_name.cake:7:10: error: undefined name `lood` [CAKE-T001]
# CHECK-NEXT: {{^}}    with lood:
# CHECK-NEXT: {{^}}         ^~~~
# CHECK-NEXT: help: did you mean `load`?
# CHECK-NOT: error
