# RUN: not cakec emit %s 2>&1 | filecheck --strict-whitespace %s
# A 64-row TMEM accumulator (tcgen05.mma M=64) lives in a lane layout the epilogue store
# does not read yet: the emitter reports it (CAKE-H100) instead of emitting a wrong store.
@cake.schedule(target="sm_100a")
def tmem_store(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d):
    lm.grid(1)
    pool = lm.smem(49152)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=1, swizzle=128b)
    sb = pool.view(offset=16384, shape=(256, 64), dtype=lm.bf16, stage=1, swizzle=128b)
    acc = lm.tmem(cols=0, width=256, shape=(64, 256), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    epilogue = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=1, prod=[load], cons=[mma], init_count=2)
    done = lm.barrier(count=1, prod=[mma], cons=[epilogue], init_count=1)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
    with mma:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        lm.commit(done)
    with epilogue:
        lm.wait(done)
        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK: tmem_store_m64.cake:25:9: error: reading a 64x256 TMEM accumulator from role `epilogue` (a 128-row accumulator, columns a multiple of 32, read by 4 warps that cover the 4 TMEM lane quarters) is not yet supported for sm_100a code generation [CAKE-H100]
# CHECK-NEXT: {{^}}        C.tma_store(acc.to(lm.bf16), coords=(0, 0))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
