# RUN: cakec verify %s
# Near miss: the consumer reads nothing and hands each slot straight back with lm.arrive.
# `empty` is still the ring's hand-back barrier (its consumer, the loader, fills `full`,
# which its producer waits on), so its first lap passes: no deadlock.
@cake.schedule(target="sm_100a")
def load_tiles(lm, T: LM.tma2d, n: LM.i32):
    pool = lm.smem(65536)
    tile = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=2)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[use], init_count=1, pipeline=pipe)
    empty = lm.barrier(count=2, prod=[use], cons=[load], init_count=1, pipeline=pipe)

    with load:
        for k in lm.range(0, n):
            lm.wait(empty, stage=k % 2)
            tile.tma_load(T, coords=(0, k), stage=k % 2, barrier=full)

    with use:
        for k in lm.range(0, n):
            lm.wait(full, stage=k % 2)
            lm.arrive(empty, stage=k % 2)
