# CAKE-D002: a 16-bit lm.regs tile is assigned a converted tile expression, not a number
# (its registers hold packed pairs converted as each half is written).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tensor2d, O: LM.tensor2d):
    work = lm.role(warps=[0, 1, 2, 3])
    p = lm.regs(shape=(64, 64), dtype=lm.bf16, role=work)
    with work:
        p = 0.0
        O.store(p.to(lm.f32), coords=(0, 0))
# CHECK: regs16_number.cake:9:13: error: `p` is a (64, 64) bf16 tile: 16-bit register tiles are (M, N) tiles assigned a converted tile expression [CAKE-D002]
# CHECK-NEXT: {{^}}        p = 0.0
# CHECK-NEXT: {{^}}            ^~~
# CHECK-NEXT: regs16_number.cake:7:5: note: `p` is a register tile, declared here
# CHECK-NEXT: {{^}}    p = lm.regs(shape=(64, 64), dtype=lm.bf16, role=work)
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: {{^}}help: assign `(...).to(lm.bf16)` of an (M, N) tile
# CHECK-NOT: error
