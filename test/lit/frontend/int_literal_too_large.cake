# CAKE-T010 from the parser: an integer literal longer than any Cake integer can be.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    huge = 123456789012345678901234567890123456789012345
# CHECK: int_literal_too_large.cake:5:12: error: integer literal too large [CAKE-T010]
# CHECK-NEXT: {{^}}    huge = 123456789012345678901234567890123456789012345
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NOT: error
