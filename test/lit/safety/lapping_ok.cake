# Near miss of lapping.cake: role `a` waits for `b`'s acknowledgement before the next tick.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def ticks(lm):
    a = lm.role(warps=[0])
    b = lm.role(warps=[1])
    tick = lm.barrier(count=1, prod=[a], cons=[b])
    ack = lm.barrier(count=1, prod=[b], cons=[a])

    with a:
        for i in lm.range(0, 2):
            lm.arrive(tick)
            lm.wait(ack)

    with b:
        for i in lm.range(0, 2):
            lm.wait(tick)
            lm.arrive(ack)
