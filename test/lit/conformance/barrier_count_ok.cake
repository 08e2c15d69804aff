# Near miss: one arrival per producing role event.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    ready = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)
