# A block has 32 × (highest warp + 1) threads, at most 1024.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def k(lm):
    load = lm.role(warps=[0])
    epi = lm.role(warps=[32, 33, 34, 35])
# CHECK: threads.cake:6:11: error: role `epi` uses warp 35, so a block has 1152 threads; sm_100a allows at most 1024 [CAKE-H010]
# CHECK-NEXT: {{^}}    epi = lm.role(warps=[32, 33, 34, 35])
# CHECK-NEXT: {{^}}          ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: use warps 0 to 31 only
