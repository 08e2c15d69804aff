# Near miss of CAKE-H018: 64 mbarriers waited on, the most one role's parity register holds.
# RUN: cakec verify %s
# RUN: cakec emit %s | filecheck %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    ready = lm.barrier(count=64, prod=[load], cons=[use])
    with load:
        lm.arrive(ready, stage=63)
    with use:
        lm.wait(ready, stage=63)
# CHECK: u64 ready_phase = 0ull;
