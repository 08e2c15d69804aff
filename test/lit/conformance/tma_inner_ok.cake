# Near miss: 8 × bf16 = 16 bytes.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def load_tile(lm, T: LM.tma2d):
    pool = lm.smem(65536)
    tile = pool.view(offset=0, shape=(64, 8), dtype=lm.bf16)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)

    with load:
        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)

    with use:
        lm.wait(full)
