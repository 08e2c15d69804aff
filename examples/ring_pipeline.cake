# A ring that laps: 4 stages, 10 iterations, so the load role refills every stage twice
# and the 9th and 10th tiles reuse stages 0 and 1 on their third lap. `full` carries
# each tile from the load warp to the MMA warp; `empty` hands the stage back once the
# MMAs reading it have completed (a commit), so its first lap passes without a release.
# The goldens for `cakec inspect` (test/lit/derive/) pin the layout, boxes, coordinates
# and descriptors this schedule implies.
@cake.schedule(target="sm_100a")
def ring_pipeline(lm, A: LM.tma2d):
    m_tile = lm.block_id(0)

    # One 128x64 bf16 tile per stage: 128-B rows, so a single 128B-swizzled atom of 16 KiB.
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)

    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=1, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[mma], cons=[load], init_count=1, pipeline=pipe)

    with load:
        for k in lm.range(0, 10):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(m_tile, k), stage=k % 4, barrier=full)

    with mma:
        for k in lm.range(0, 10):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sa[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)
