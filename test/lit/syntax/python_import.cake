# CAKE-P001: imports are not part of Cake.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
import torch

@cake.schedule()
def k(lm):
    pass
# CHECK: python_import.cake:3:1: error: `import` is not part of Cake [CAKE-P001]
# CHECK-NEXT: {{^}}import torch
# CHECK-NEXT: {{^}}^~~~~~
# CHECK-NEXT: help: Cake files have no imports; the vocabulary is the `lm` builtins
# CHECK-NOT: error
