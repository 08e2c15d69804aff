# A TMEM accumulator named in tile arithmetic reads as an f32 tile: the frontend inserts the
# read (`cake.convert`, as `acc.to(lm.f32)` would) where the expression names it, so the
# verifiers check it like any TMEM read, and the kernel verifies.
# RUN: cakec verify %s
# RUN: cakec opt %s | filecheck %s
@cake.schedule(target="sm_100a")
def k(lm, X: LM.tma2d, C: LM.tma2d, Csq: LM.tensor2d, Idx: LM.tensor2d):
    pool = lm.smem(65536)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sc = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epi = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epi])
    best_d = lm.regs(shape=(128, 1), dtype=lm.f32, role=epi)
    best_i = lm.regs(shape=(128, 1), dtype=lm.i32, role=epi)
    with load:
        sx.tma_load(X, coords=(0, 0), barrier=full)
        sc.tma_load(C, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sx, sc, init=True)
        lm.commit(done)
    with epi:
        c_sq = Csq.load(coords=(0, 0), shape=(1, 128), dtype=lm.f32, other=lm.inf)
        lm.wait(done)
        lm.argmin(best_d, best_i, c_sq - 2.0 * acc, axis=1, init=True)
        Idx.store(best_i, coords=(0, 0))
# CHECK: %[[READ:[0-9]+]] = "cake.convert"(%acc) : (!cake.tmem<128x128xf32>) -> !cake.tile<128x128xf32>
# CHECK: "cake.tile_binary"(%{{[0-9]+}}, %[[READ]]) <{kind = "mul"}> : (f32, !cake.tile<128x128xf32>) -> !cake.tile<128x128xf32>
# CHECK: "cake.argmin"(%best_d, %best_i,
