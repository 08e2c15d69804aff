# Static nested loops: one parity per dynamic instance, in execution order. Two tiles of
# three K steps on a 2-stage ring: the ring position carries over from tile to tile.
# A static loop longer than 1024 iterations gets the closed form instead of a list.
# RUN: cakec opt %s --pass-pipeline derive-barriers | filecheck %s
@cake.schedule(target="sm_100a")
def nested(lm, A: LM.tma2d, B: LM.tma2d):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=2, prod=[mma], cons=[load])

    with load:
        for t in lm.range(0, 2):
            for k in lm.range(0, 3):
                lm.wait(empty, stage=(t * 3 + k) % 2)
                sa.tma_load(A, coords=(t, k), stage=(t * 3 + k) % 2, barrier=full)
                sb.tma_load(B, coords=(0, k), stage=(t * 3 + k) % 2, barrier=full)
        for k in lm.range(0, 2000):
            lm.wait(empty, stage=k % 2)
            sa.tma_load(A, coords=(2, k), stage=k % 2, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 2, barrier=full)

    with mma:
        for t in lm.range(0, 2):
            for k in lm.range(0, 3):
                lm.wait(full, stage=(t * 3 + k) % 2)
                lm.mma(acc, sa[(t * 3 + k) % 2], sb[(t * 3 + k) % 2], init=(k == 0))
                lm.commit(empty, stage=(t * 3 + k) % 2)
        for k in lm.range(0, 2000):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k == 0))
            lm.commit(empty, stage=k % 2)
# CHECK: "cake.wait"(%empty, %{{.*}}) {cake.parity = array<i64: 1, 1, 0, 0, 1, 1>, cake.initial_parity = 1 : i64}
# CHECK: "cake.wait"(%empty, %{{.*}}) {cake.parity = "tracked at run time", cake.initial_parity = 1 : i64}
# CHECK: "cake.wait"(%full, %{{.*}}) {cake.parity = array<i64: 0, 0, 1, 1, 0, 0>, cake.initial_parity = 0 : i64}
# CHECK: "cake.wait"(%full, %{{.*}}) {cake.parity = "tracked at run time", cake.initial_parity = 0 : i64}
