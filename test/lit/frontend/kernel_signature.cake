# CAKE-T014: a kernel's signature: the builder handle must come first and be unannotated,
# and every other parameter needs an `LM.*` type. Each kernel is checked on its own.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def no_handle(A: LM.tma2d):
    pass

@cake.schedule()
def untyped(lm, n):
    pass

@cake.schedule()
def annotated_handle(lm: LM.i32):
    pass
# CHECK: kernel_signature.cake:5:15: error: the first parameter of kernel `no_handle` must be the builder handle `lm` (without annotation) [CAKE-T014]
# CHECK-NEXT: {{^}}def no_handle(A: LM.tma2d):
# CHECK-NEXT: {{^}}              ^
# CHECK-NEXT: help: write `def no_handle(lm, ...)`
# CHECK-NEXT: kernel_signature.cake:9:17: error: kernel parameter `n` needs a type [CAKE-T014]
# CHECK-NEXT: {{^}}def untyped(lm, n):
# CHECK-NEXT: {{^}}                ^
# CHECK-NEXT: help: annotate it, e.g. `n: LM.tma2d` or `n: LM.i32`
# CHECK-NEXT: kernel_signature.cake:13:22: error: the first parameter of kernel `annotated_handle` must be the builder handle `lm` (without annotation) [CAKE-T014]
# CHECK-NEXT: {{^}}def annotated_handle(lm: LM.i32):
# CHECK-NEXT: {{^}}                     ^~
# CHECK-NEXT: help: write `def annotated_handle(lm, ...)`
# CHECK-NOT: error
