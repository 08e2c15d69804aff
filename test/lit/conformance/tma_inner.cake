# The innermost extent of a TMA box is a multiple of 16 bytes: 6 × bf16 is 12.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def load_tile(lm, T: LM.tma2d):
    pool = lm.smem(65536)
    tile = pool.view(offset=0, shape=(64, 6), dtype=lm.bf16)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)

    with load:
        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)

    with use:
        lm.wait(full)
# CHECK: tma_inner.cake:12:9: error: the innermost extent of this TMA copy of `tile` is 12 bytes (6 × bf16); TMA needs a multiple of 16 bytes [CAKE-H014]
# CHECK-NEXT: {{^}}        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tma_inner.cake:6:12: note: `tile` is declared here
# CHECK-NEXT: {{^}}    tile = pool.view(offset=0, shape=(64, 6), dtype=lm.bf16)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: make the inner dimension of `tile` a multiple of 8 elements
