# Runtime trip counts: a wait at stage `k % S` (S = the barrier's count) inside one loop from
# 0 gets a closed-form parity; the empty barrier's form is flipped (its first lap passes). A
# stage that mixes the tile and K counters of a persistent loop is tracked at run time, and
# a constant stage in a runtime loop alternates every iteration.
# RUN: cakec opt %s --pass-pipeline derive-barriers | filecheck %s
@cake.schedule(target="sm_100a")
def forms(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32, T: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    sb = pool.view(offset=49152, shape=(128, 64), dtype=lm.bf16, stage=3, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=3, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=3, prod=[mma], cons=[load])
    acc_full = lm.barrier(count=1, prod=[mma], cons=[epi])
    acc_empty = lm.barrier(count=1, prod=[epi], cons=[mma])

    with load:
        for t in lm.range(0, T):
            for k in lm.range(0, k_tiles):
                lm.wait(empty, stage=(t * k_tiles + k) % 3)
                sa.tma_load(A, coords=(t, k), stage=(t * k_tiles + k) % 3, barrier=full)
                sb.tma_load(B, coords=(0, k), stage=(t * k_tiles + k) % 3, barrier=full)

    with mma:
        for t in lm.range(0, T):
            lm.wait(acc_empty)
            for k in lm.range(0, k_tiles):
                lm.wait(full, stage=(t * k_tiles + k) % 3)
                lm.mma(acc, sa[(t * k_tiles + k) % 3], sb[(t * k_tiles + k) % 3], init=(k == 0))
                lm.commit(empty, stage=(t * k_tiles + k) % 3)
            lm.commit(acc_full)

    with epi:
        for t in lm.range(0, T):
            lm.wait(acc_full)
            C.tma_store(acc.to(lm.bf16), coords=(t, 0))
            lm.arrive(acc_empty)
# CHECK: %acc_empty = "cake.barrier"{{.*}}cake.first_wait_free = true}
# CHECK: "cake.wait"(%empty, %{{.*}}) {cake.parity = "tracked at run time", cake.initial_parity = 1 : i64}
# CHECK: "cake.wait"(%acc_empty, %{{.*}}) {cake.parity = "(t & 1) ^ 1", cake.initial_parity = 1 : i64}
# CHECK: "cake.wait"(%full, %{{.*}}) {cake.parity = "tracked at run time", cake.initial_parity = 0 : i64}
# CHECK: "cake.wait"(%acc_full, %{{.*}}) {cake.parity = "t & 1", cake.initial_parity = 0 : i64}
