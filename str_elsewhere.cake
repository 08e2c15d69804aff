@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma3d, Csq: LM.tensor2d, n: LM.i32):
    pool = lm.smem(32768)
    x = "hello"
