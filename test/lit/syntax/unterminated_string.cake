# CAKE-P002: a string literal without its closing quote.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a)
def k(lm):
    pass
# CHECK: unterminated_string.cake:3:23: error: unterminated string [CAKE-P002]
# CHECK-NEXT: {{^}}@cake.schedule(target="sm_90a)
# CHECK-NEXT: {{^}}                      ^
# CHECK-NEXT: help: close it with " on the same line
# CHECK-NOT: error
