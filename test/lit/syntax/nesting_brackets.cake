# CAKE-P004: brackets nested deeper than 64 levels.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm):
    x = ((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((1))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))
# CHECK: nesting_brackets.cake:5:73: error: brackets nested more than 64 deep [CAKE-P004]
# CHECK-NEXT: {{^}}    x = (((((((((((((((((((((((((((((((((
# CHECK-NEXT: {{^}}                                                                        ^
# CHECK-NOT: error
