# CAKE-T010: a constant that device code would hold in an i32 but does not fit in one, as a
# literal or as the folded value of constant arithmetic, reported where it is written.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    a = n + 99999999999999999999
    b = n * (2 ** 40)
    c = n - 2147483648
    d = n + 2147483647
# CHECK: int_constant_i32.cake:6:13: error: integer constant 99999999999999999999 does not fit in 32 bits [CAKE-T010]
# CHECK-NEXT: {{^}}    a = n + 99999999999999999999
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: kernel arithmetic is on 32-bit signed integers (-2147483648 to 2147483647)
# CHECK-NEXT: int_constant_i32.cake:7:14: error: integer constant 1099511627776 does not fit in 32 bits [CAKE-T010]
# CHECK-NEXT: {{^}}    b = n * (2 ** 40)
# CHECK-NEXT: {{^}}             ^~~~~~~
# CHECK-NEXT: help: kernel arithmetic is on 32-bit signed integers (-2147483648 to 2147483647)
# CHECK-NEXT: int_constant_i32.cake:8:13: error: integer constant 2147483648 does not fit in 32 bits [CAKE-T010]
# CHECK-NEXT: {{^}}    c = n - 2147483648
# CHECK-NEXT: {{^}}            ^~~~~~~~~~
# CHECK-NEXT: help: kernel arithmetic is on 32-bit signed integers (-2147483648 to 2147483647)
# CHECK-NOT: error
