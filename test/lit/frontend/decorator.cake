# CAKE-T015: a kernel needs `@cake.schedule(...)`, and no other decorator exists.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
def undecorated(lm):
    pass

@cake.kernel
def wrong(lm):
    pass

@torch.compile()
@cake.schedule()
def extra(lm):
    pass
# CHECK: decorator.cake:3:5: error: kernel `undecorated` is missing `@cake.schedule()` [CAKE-T015]
# CHECK-NEXT: {{^}}def undecorated(lm):
# CHECK-NEXT: {{^}}    ^~~~~~~~~~~
# CHECK-NEXT: help: add `@cake.schedule()` on the line before `def`
# CHECK-NEXT: decorator.cake:6:1: error: unknown decorator `@cake.kernel` [CAKE-T015]
# CHECK-NEXT: {{^}}@cake.kernel
# CHECK-NEXT: {{^}}^~~~~~~~~~~~
# CHECK-NEXT: help: kernels are declared with `@cake.schedule(...)`
# CHECK-NEXT: decorator.cake:10:1: error: unknown decorator `@torch.compile` [CAKE-T015]
# CHECK-NEXT: {{^}}@torch.compile()
# CHECK-NEXT: {{^}}^~~~~~~~~~~~~~~~
# CHECK-NEXT: help: kernels are declared with `@cake.schedule(...)`
# CHECK-NOT: error
