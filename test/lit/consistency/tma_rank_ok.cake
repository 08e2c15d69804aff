# Near miss: a 2-D view from a 3-D tensor is padded with a leading 1.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def load_tile(lm, T: LM.tma3d):
    pool = lm.smem(65536)
    tile = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)

    with load:
        tile.tma_load(T, coords=(0, 0, 0), stage=0, barrier=full)

    with use:
        lm.wait(full)
