# CAKE-T011: strings appear only as the `target=` of `@cake.schedule` (docs/language.md); a
# string bound to a name verified before.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm):
    label = "tile loop"
# CHECK: string_value.cake:6:13: error: a string can only be the `target=` of `@cake.schedule` [CAKE-T011]
# CHECK-NEXT: {{^}}    label = "tile loop"
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~
# CHECK-NEXT: help: names hold integers, floats, booleans and the resources `lm.*` declares
# CHECK-NOT: error
