# Near miss: warps up to 31 make exactly 1024 threads.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def k(lm):
    load = lm.role(warps=[0])
    epi = lm.role(warps=[28, 29, 30, 31])
