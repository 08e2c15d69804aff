# CAKE-T004: a method the receiver's kind does not have; the note points at the declaration.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(65536)
    v = pool.veiw(offset=0, shape=(64, 64), dtype=lm.bf16)
    load = lm.role(warps=[0])
    with load:
        load.tma_load(A, coords=(0, 0))
# CHECK: unknown_method.cake:6:9: error: an SMEM pool has no method `veiw` [CAKE-T004]
# CHECK-NEXT: {{^}}    v = pool.veiw(offset=0, shape=(64, 64), dtype=lm.bf16)
# CHECK-NEXT: {{^}}        ^~~~~~~~~
# CHECK-NEXT: unknown_method.cake:5:5: note: `pool` is declared here
# CHECK-NEXT: {{^}}    pool = lm.smem(65536)
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: help: did you mean `view`?
# CHECK-NEXT: unknown_method.cake:9:9: error: a role has no method `tma_load` [CAKE-T004]
# CHECK-NEXT: {{^}}        load.tma_load(A, coords=(0, 0))
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~
# CHECK-NEXT: unknown_method.cake:7:5: note: `load` is declared here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0])
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NOT: error
