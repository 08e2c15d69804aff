# CAKE-S010: role `a` completes phase 1 of `tick` before role `b` has observed phase 0; the
# phase parity wraps and `b` waits for a phase that already went by.
# RUN: not cakec verify %s 2>&1 | filecheck %s
@cake.schedule(target="sm_100a")
def ticks(lm):
    a = lm.role(warps=[0])
    b = lm.role(warps=[1])
    tick = lm.barrier(count=1, prod=[a], cons=[b])

    with a:
        for i in lm.range(0, 2):
            lm.arrive(tick)

    with b:
        for i in lm.range(0, 2):
            lm.wait(tick)
# CHECK: {{.*}}lapping.cake:12:13: error: role a completes phase 1 of tick[0] at line 12 before role b has waited for phase 0 (line 16); the phase bit wraps and role b misses a phase [CAKE-S010]
# CHECK-NEXT: {{^}}            lm.arrive(tick)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~
# CHECK-NEXT: {{.*}}lapping.cake:16:13: note: role b waits on tick[0] here
# CHECK-NEXT: {{^}}            lm.wait(tick)
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~
# CHECK-NEXT: help: make role a wait until role b releases tick[0] (an empty barrier) before completing it again, or use more stages
# CHECK-NOT: [CAKE-S0
