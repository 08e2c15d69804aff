# CAKE-T006: a required argument is missing; the message names its kind.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    pool = lm.smem(65536)
    v = pool.view(offset=0, shape=(64, 64))
    pipe = lm.pipeline()
    load = lm.role(warps=[0])
    full = lm.barrier(count=2, prod=[load])
# CHECK: missing_argument.cake:6:9: error: `pool.view` is missing required argument `dtype` (a dtype such as lm.bf16) [CAKE-T006]
# CHECK-NEXT: {{^}}    v = pool.view(offset=0, shape=(64, 64))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `dtype=...`
# CHECK-NEXT: missing_argument.cake:7:12: error: `lm.pipeline` is missing required argument `stages` (an integer constant) [CAKE-T006]
# CHECK-NEXT: {{^}}    pipe = lm.pipeline()
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~
# CHECK-NEXT: help: add `stages=...`
# CHECK-NEXT: missing_argument.cake:9:12: error: `lm.barrier` is missing required argument `cons` (a list of roles) [CAKE-T006]
# CHECK-NEXT: {{^}}    full = lm.barrier(count=2, prod=[load])
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: add `cons=...`
# CHECK-NOT: error
