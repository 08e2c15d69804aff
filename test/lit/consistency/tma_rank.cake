# A TMA box has one extent per tensor dimension: a 3-D view cannot come from a
# 2-D tensor.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def load_tile(lm, T: LM.tma2d):
    pool = lm.smem(65536)
    tile = pool.view(offset=0, shape=(2, 64, 64), dtype=lm.bf16)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)

    with load:
        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)

    with use:
        lm.wait(full)
# CHECK: tma_rank.cake:13:9: error: view `tile` is 3-D but tensor `T` has rank 2; a TMA box has one extent per tensor dimension [CAKE-D006]
# CHECK-NEXT: {{^}}        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tma_rank.cake:7:12: note: `tile` is declared here with shape (2, 64, 64)
# CHECK-NEXT: {{^}}    tile = pool.view(offset=0, shape=(2, 64, 64), dtype=lm.bf16)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tma_rank.cake:5:19: note: `T` is declared here with rank 2
# CHECK-NEXT: {{^}}def load_tile(lm, T: LM.tma2d):
# CHECK-NEXT: {{^}}                  ^
# CHECK-NEXT: help: declare `T` as `LM.tma3d`, or give `tile` at most 2 dimensions
