# CAKE-T014: a file without any kernel.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
# Only comments here: no `@cake.schedule()` kernel.
# CHECK: no_kernel.cake:1:1: error: no kernel in this file [CAKE-T014]
# CHECK-NEXT: {{^}}# CAKE-T014: a file without any kernel.
# CHECK-NEXT: {{^}}^
# CHECK-NEXT: help: define one: `@cake.schedule()` then `def NAME(lm, ...):`
# CHECK-NOT: error
