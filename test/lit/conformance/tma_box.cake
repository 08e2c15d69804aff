# A TMA box is at most 256 elements along every dimension.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_100a")
def load_tile(lm, T: LM.tma2d):
    pool = lm.smem(131072)
    tile = pool.view(offset=0, shape=(512, 64), dtype=lm.bf16)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use], init_count=1)

    with load:
        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)

    with use:
        lm.wait(full)
# CHECK: tma_box.cake:12:9: error: this TMA copy of `tile` has a box of 512 elements along dimension 0 of `T` (outermost); a TMA box has at most 256 per dimension [CAKE-H012]
# CHECK-NEXT: {{^}}        tile.tma_load(T, coords=(0, 0), stage=0, barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: tma_box.cake:6:12: note: `tile` is declared here
# CHECK-NEXT: {{^}}    tile = pool.view(offset=0, shape=(512, 64), dtype=lm.bf16)
# CHECK-NEXT: {{^}}           ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: split `tile` into parts of at most 256 along that dimension, each with its own `tma_load`
