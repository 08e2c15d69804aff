# Distilled from the H200 (2026-12-04): fmha_fwd_sm90_xt.cake kept the tile before's row max
# and sum (`m_p = m_i`, `l_p = l_i`) across the next tile's first softmax, which assigns m_i
# and l_i. The frontend bound m_p to m_i's own registers (the storage was even renamed m_p),
# so the softmax overwrote what the epilogue then read: O and lse wrong from each CTA's second
# tile on (max abs error 6–18 at every bench shape, the small test shapes with one tile per
# CTA right). Binding a second name to an `lm.regs` tile is now CAKE-T016 (this file is the
# distilled kernel); its help gives the copy (`m_i + 0.0`; regs_copy_ok.cake emits one).
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
# CHECK: regs_alias.cake:17:17: error: `p = m` would name the register tile `m` again, not copy it: a later assignment to `m` would change `p` [CAKE-T016]
# CHECK-NEXT: {{^}}            p = m
# CHECK-NEXT: {{^}}                ^
# CHECK-NEXT: regs_alias.cake:13:5: note: `m` is a register tile, declared here
# CHECK-NEXT: {{^}}    m = lm.regs(shape=(64, 1), dtype=lm.f32, role=w)
# CHECK-NEXT: {{^}}    ^
# CHECK-NEXT: help: copy its current value with `p = m + 0.0`
