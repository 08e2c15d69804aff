# Near miss: 40 × 128 + 232 × 256 = 64512 registers, valid counts, whole warpgroups.
# RUN: cakec verify %s
@cake.schedule(target="sm_90a")
def k(lm):
    load = lm.role(warps=[0, 1, 2, 3], regs=40)
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11], regs=232)
