# CAKE-T013: the wrong number of arguments: too many positional arguments, one given both
# positionally and by keyword, TMA coordinates that do not match the tensor's rank, grid
# dimensions, positional arguments to the decorator.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d):
    pipe = lm.pipeline(2, 3)
    pipe2 = lm.pipeline(2, stages=3)
    lm.grid(1, 2, 3, 4)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=1, prod=[load], cons=[mma])
    with load:
        sa.tma_load(A, coords=(0, 0, 1), barrier=full)

@cake.schedule("sm_90a")
def k2(lm):
    pass
# CHECK: arity.cake:7:27: error: `lm.pipeline` takes at most 1 positional argument(s), got 2 [CAKE-T013]
# CHECK-NEXT: {{^}}    pipe = lm.pipeline(2, 3)
# CHECK-NEXT: {{^}}                          ^
# CHECK-NEXT: arity.cake:8:28: error: argument `stages` of `lm.pipeline` is given twice [CAKE-T013]
# CHECK-NEXT: {{^}}    pipe2 = lm.pipeline(2, stages=3)
# CHECK-NEXT: {{^}}                           ^~~~~~
# CHECK-NEXT: arity.cake:9:5: error: `lm.grid` takes 1 to 3 dimensions [CAKE-T013]
# CHECK-NEXT: {{^}}    lm.grid(1, 2, 3, 4)
# CHECK-NEXT: {{^}}    ^~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: arity.cake:16:31: error: `coords` has 3 entries but tensor `A` has rank 2 [CAKE-T013]
# CHECK-NEXT: {{^}}        sa.tma_load(A, coords=(0, 0, 1), barrier=full)
# CHECK-NEXT: {{^}}                              ^~~~~~~~~
# CHECK-NEXT: arity.cake:6:11: note: declared here
# CHECK-NEXT: {{^}}def k(lm, A: LM.tma2d):
# CHECK-NEXT: {{^}}          ^
# CHECK-NEXT: arity.cake:18:16: error: `@cake.schedule` takes keyword arguments only [CAKE-T013]
# CHECK-NEXT: {{^}}@cake.schedule("sm_90a")
# CHECK-NEXT: {{^}}               ^~~~~~~~
# CHECK-NOT: error
