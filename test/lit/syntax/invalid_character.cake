# CAKE-P002: a character that starts no token.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, n: LM.i32):
    tiles = n $ 2
# CHECK: invalid_character.cake:5:15: error: invalid character '$' [CAKE-P002]
# CHECK-NEXT: {{^}}    tiles = n $ 2
# CHECK-NEXT: {{^}}              ^
# CHECK-NOT: error
