# CAKE-T016: `p = m` for a declared register tile `m` would be a second name of `m`'s
# registers, not a copy: the next `m = ...` would change `p` too. Distilled from an attention
# kernel that kept the tile before's row max (`m_p = m_i`) across the next tile's softmax and
# stored the new max in its lse (wrong O and lse from a CTA's second tile on, on the H200).
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule(target="sm_90a")
def alias(lm, A: LM.tensor2d, N: LM.i32):
    lm.grid(1)
    w = lm.role(warps=[0, 1, 2, 3], regs=240)
    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
    with w:
        m = 0.0
        for t in lm.range(0, N):
            p = m
            m = m + 1.0
            A.store(p, coords=(t, 0))
# CHECK: regs_alias.cake:14:17: error: `p = m` would name the register tile `m` again, not copy it: a later assignment to `m` would change `p` [CAKE-T016]
# CHECK-NEXT: {{^}}            p = m
# CHECK-NEXT: {{^}}                ^
# CHECK-NEXT: regs_alias.cake:10:5: note: `m` is a register tile, declared here
# CHECK-NEXT: {{^}}    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: help: copy its current value with `p = m + 0.0`
