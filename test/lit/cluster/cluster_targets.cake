# Clusters need a target that has them and a backend that lowers them (H023): sm_80 has no
# clusters; sm_120a has them, but its mma.sync backend does not lower them yet. A portable
# cluster holds at most 8 CTAs (H024), and a constant grid must be whole clusters (H025).
# RUN: not cakec verify --target sm_80 %s 2>&1 | filecheck --strict-whitespace --check-prefix=SM80 %s
# RUN: not cakec verify --target sm_120a %s 2>&1 | filecheck --strict-whitespace --check-prefix=SM120 %s
# RUN: not cakec verify --target sm_90a %s 2>&1 | filecheck --strict-whitespace --check-prefix=SM90 %s
@cake.schedule(cluster=(2, 1, 1))
def pair(lm):
    lm.grid(8)
    math = lm.role(warps=[0])

@cake.schedule(cluster=(4, 2, 2))
def sixteen(lm):
    lm.grid(64)
    math = lm.role(warps=[0])

@cake.schedule(cluster=(2, 1, 1))
def odd(lm):
    lm.grid(7)
    math = lm.role(warps=[0])
# SM80: cluster_targets.cake:8:5: error: `cluster=(2, 1, 1)` needs thread-block clusters, which sm_80 does not have [CAKE-H023]
# SM80-NEXT: {{^}}def pair(lm):
# SM80-NEXT: {{^}}    ^~~~{{$}}
# SM80-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a, or drop `cluster=` and its multicast copies
# SM80: cluster_targets.cake:13:5: error: `cluster=(4, 2, 2)` needs thread-block clusters, which sm_80 does not have [CAKE-H023]
# SM80-NEXT: {{^}}def sixteen(lm):
# SM80-NEXT: {{^}}    ^~~~~~~{{$}}
# SM80-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a, or drop `cluster=` and its multicast copies
# SM80: cluster_targets.cake:18:5: error: `cluster=(2, 1, 1)` needs thread-block clusters, which sm_80 does not have [CAKE-H023]
# SM80-NEXT: {{^}}def odd(lm):
# SM80-NEXT: {{^}}    ^~~{{$}}
# SM80-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a, or drop `cluster=` and its multicast copies
# SM80-NOT: error
# SM120: cluster_targets.cake:8:5: error: `cluster=(2, 1, 1)`: cakec does not lower thread-block clusters for sm_120a yet [CAKE-H023]
# SM120-NEXT: {{^}}def pair(lm):
# SM120-NEXT: {{^}}    ^~~~{{$}}
# SM120-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a
# SM120: cluster_targets.cake:13:5: error: `cluster=(4, 2, 2)`: cakec does not lower thread-block clusters for sm_120a yet [CAKE-H023]
# SM120-NEXT: {{^}}def sixteen(lm):
# SM120-NEXT: {{^}}    ^~~~~~~{{$}}
# SM120-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a
# SM120: cluster_targets.cake:18:5: error: `cluster=(2, 1, 1)`: cakec does not lower thread-block clusters for sm_120a yet [CAKE-H023]
# SM120-NEXT: {{^}}def odd(lm):
# SM120-NEXT: {{^}}    ^~~{{$}}
# SM120-NEXT: {{^}}help: target sm_90a, sm_100a or sm_103a
# SM120-NOT: error
# SM90: cluster_targets.cake:13:5: error: `cluster=(4, 2, 2)` has 16 blocks, more than the 8 of a portable cluster on sm_90a [CAKE-H024]
# SM90-NEXT: {{^}}def sixteen(lm):
# SM90-NEXT: {{^}}    ^~~~~~~{{$}}
# SM90-NEXT: {{^}}help: use at most 8 blocks, e.g. `cluster=(2, 1, 1)`
# SM90: cluster_targets.cake:19:5: error: the grid has 7 blocks along x, not a multiple of the cluster's 2 [CAKE-H025]
# SM90-NEXT: {{^}}    lm.grid(7)
# SM90-NEXT: {{^}}    ^~~~~~~~~~{{$}}
# SM90-NEXT: {{^}}help: launch 8 blocks along x (blocks past the work must find none), or a cluster that divides 7
# SM90-NOT: error
