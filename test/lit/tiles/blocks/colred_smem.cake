# CAKE-H009: a column reduction's SMEM scratch (4 B per warp and column) counts against the
# SKU's shared memory with the pools; the note points at the reduction.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tensor2d, Y: LM.tensor2d):
    pool = lm.smem(230400)
    buf = pool.view(offset=0, shape=(1, 57600), dtype=lm.f32, swizzle=None)
    work = lm.role(warps=[0, 1, 2, 3, 4, 5, 6, 7])
    with work:
        x = X.load(coords=(0, 0), shape=(128, 256), dtype=lm.f32)
        Y.store(x.sum(axis=0), coords=(0, 0))
# CHECK: colred_smem.cake:6:12: error: this kernel needs {{[0-9]+}} bytes of shared memory per block ({{[0-9]+}} for pools and their alignment, 8192 for column-reduction scratch, 0 for mbarriers, 1024 reserved by the system), more than the 232448 bytes sm_90a allows [CAKE-H009]
# CHECK: colred_smem.cake:11:17: note: this column reduction combines its warps' partial sums in SMEM scratch
# CHECK-NOT: error
