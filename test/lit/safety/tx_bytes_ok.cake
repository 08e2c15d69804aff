# Near miss of tx_bytes.cake: one 64 KiB load per phase.
# RUN: cakec verify %s
@cake.schedule(target="sm_100a")
def big(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    v0 = pool.view(offset=0, shape=(128, 128), dtype=lm.f32, swizzle=None)
    load = lm.role(warps=[0])
    use = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[use])

    with load:
        v0.tma_load(A, coords=(0, 0), barrier=full)

    with use:
        lm.wait(full)
