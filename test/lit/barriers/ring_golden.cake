# Issue 4's golden ring: 4 stages, 10 iterations. The full barrier's waits alternate parity
# every lap (0,0,0,0,1,1,1,1,0,0); the empty barrier's first lap passes without a release
# (1,1,1,1,0,0,0,0,1,1). Two TMA loads per stage: two arrivals and 2 x 16 KiB per phase.
# RUN: cakec opt %s --pass-pipeline derive-barriers | filecheck %s
@cake.schedule(target="sm_100a")
def ring(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d):
    pool = lm.smem(131072)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=2)
    empty = lm.barrier(count=4, prod=[mma], cons=[load])
    done = lm.barrier(count=1, prod=[mma], cons=[epi])

    with load:
        for k in lm.range(0, 10):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(0, k), stage=k % 4, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k % 4, barrier=full)

    with mma:
        for k in lm.range(0, 10):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sb[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)
        lm.commit(done)

    with epi:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: %full = "cake.barrier"{{.*}} {cake.smem_offset = 0 : i64, cake.arrivals = 2 : i64, cake.tx_bytes = 32768 : i64, cake.first_wait_free = false}
# CHECK: %empty = "cake.barrier"{{.*}} {cake.smem_offset = 32 : i64, cake.arrivals = 1 : i64, cake.tx_bytes = 0 : i64, cake.first_wait_free = true}
# CHECK: %done = "cake.barrier"{{.*}} {cake.smem_offset = 64 : i64, cake.arrivals = 1 : i64, cake.tx_bytes = 0 : i64, cake.first_wait_free = false}
# CHECK: "cake.wait"(%empty, %{{.*}}) {cake.parity = array<i64: 1, 1, 1, 1, 0, 0, 0, 0, 1, 1>, cake.initial_parity = 1 : i64}
# CHECK: "cake.wait"(%full, %{{.*}}) {cake.parity = array<i64: 0, 0, 0, 0, 1, 1, 1, 1, 0, 0>, cake.initial_parity = 0 : i64}
# CHECK: "cake.wait"(%done, %{{.*}}) {cake.parity = array<i64: 0>, cake.initial_parity = 0 : i64}
# CHECK: {cake.barrier_smem = 72 : i64}
