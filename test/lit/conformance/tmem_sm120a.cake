# Consumer Blackwell (sm_120a) has TMA but no tcgen05 and no Tensor Memory: the same refusal.
# RUN: not cakec verify %examples/seed_fragment.cake --target sm_120a 2>&1 | filecheck --strict-whitespace %s
# CHECK: seed_fragment.cake:6:16: error: `lm.tmem` needs Tensor Memory, which sm_120a does not have [CAKE-H001]
# CHECK-NEXT: {{^}}    tmem_acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
# CHECK-NEXT: {{^}}               ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: seed_fragment.cake:25:13: note: `tmem_acc` is the accumulator of this `lm.mma`, which only tcgen05.mma can write
# CHECK-NEXT: {{^}}            lm.mma(tmem_acc, smem_q[stage], smem_q[stage], init=(stage == 0))
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: help: target sm_100a or sm_103a, or accumulate in registers with `lm.regs(...)`
