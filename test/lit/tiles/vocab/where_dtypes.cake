# CAKE-D002: lm.where selects between operands of one dtype; an f32 tile and an i32 index
# tile are two.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tensor2d, O: LM.tensor2d):
    work = lm.role(warps=[0, 1, 2, 3])
    with work:
        x = X.load(coords=(0, 0), shape=(64, 64), dtype=lm.f32)
        O.store(lm.where(x > 0.0, x, lm.row_index(x)), coords=(0, 0))
# CHECK: where_dtypes.cake:9:17: error: `lm.where` combines an f32 and an i32 tile [CAKE-D002]
# CHECK-NEXT: {{^}}        O.store(lm.where(x > 0.0, x, lm.row_index(x)), coords=(0, 0))
# CHECK-NEXT: {{^}}                ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: {{^}}help: convert one side with `.to(...)`
# CHECK-NOT: error
