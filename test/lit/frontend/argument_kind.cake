# CAKE-T007: a value of the wrong kind where a builtin, statement or operator needs another:
# a role where a barrier is expected (with a note at the role's declaration), a barrier as a
# `with` block, an integer where a boolean is expected, a multi-stage view as an MMA operand,
# a non-tuple `coords`, a non-TMA tensor, calling a non-callable, indexing a role,
# unpacking, `/` on integers, a loop over a non-range, assigning a call that returns
# nothing, and an integer where a boolean is expected.
# RUN: not cakec verify %s 2>&1 | filecheck --strict-whitespace %s
@cake.schedule()
def k(lm, A: LM.tma2d, B: LM.tensor2d, n: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=2, prod=[load], cons=[mma])
    x = n(3)
    y = load[0]
    a, b = (1, 2, 3)
    h = n / 2
    with full:
        pass
    with load:
        lm.wait(mma, stage=0)
        sa.tma_load(A, coords=0, stage=0, barrier=full)
        sa.tma_load(B, coords=(0, 0), stage=0, barrier=full)
        for i in n:
            pass
    with mma:
        z = lm.fence_proxy()
        lm.mma(acc, sa, sa[0])
        lm.mma(acc, sa[0], sa[1], init=n)
# CHECK: argument_kind.cake:16:9: error: a runtime integer is not callable [CAKE-T007]
# CHECK-NEXT: {{^}}    x = n(3)
# CHECK-NEXT: {{^}}        ^
# CHECK-NEXT: argument_kind.cake:17:9: error: a role cannot be indexed [CAKE-T007]
# CHECK-NEXT: {{^}}    y = load[0]
# CHECK-NEXT: {{^}}        ^~~~~~~
# CHECK-NEXT: argument_kind.cake:13:5: note: `load` is a role, declared here
# CHECK-NEXT: {{^}}    load = lm.role(warps=[0])
# CHECK-NEXT: {{^}}    ^~~~
# CHECK-NEXT: argument_kind.cake:18:5: error: cannot unpack a tuple of 3 value(s) into 2 names [CAKE-T007]
# CHECK-NEXT: {{^}}    a, b = (1, 2, 3)
# CHECK-NEXT: {{^}}    ^~~~~~~~~~~~~~~~
# CHECK-NEXT: argument_kind.cake:19:9: error: operator `/` is not defined on integers [CAKE-T007]
# CHECK-NEXT: {{^}}    h = n / 2
# CHECK-NEXT: {{^}}        ^~~~~
# CHECK-NEXT: help: use `//` for integer division
# CHECK-NEXT: argument_kind.cake:20:10: error: `with` expects a role, got a barrier [CAKE-T007]
# CHECK-NEXT: {{^}}    with full:
# CHECK-NEXT: {{^}}         ^~~~
# CHECK-NEXT: help: declare one with `NAME = lm.role(warps=[...])`
# CHECK-NEXT: argument_kind.cake:23:17: error: `barrier` expects a barrier, got a role [CAKE-T007]
# CHECK-NEXT: {{^}}        lm.wait(mma, stage=0)
# CHECK-NEXT: {{^}}                ^~~
# CHECK-NEXT: argument_kind.cake:14:5: note: `mma` is a role, declared here
# CHECK-NEXT: {{^}}    mma = lm.role(warps=[1])
# CHECK-NEXT: {{^}}    ^~~
# CHECK-NEXT: argument_kind.cake:24:31: error: `coords` expects a tuple of integers, got an integer constant [CAKE-T007]
# CHECK-NEXT: {{^}}        sa.tma_load(A, coords=0, stage=0, barrier=full)
# CHECK-NEXT: {{^}}                              ^
# CHECK-NEXT: help: write a tuple, e.g. `coords=(m_tile, k)`
# CHECK-NEXT: argument_kind.cake:25:9: error: `B` is not a TMA tensor [CAKE-T007]
# CHECK-NEXT: {{^}}        sa.tma_load(B, coords=(0, 0), stage=0, barrier=full)
# CHECK-NEXT: {{^}}        ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: argument_kind.cake:9:24: note: declared here
# CHECK-NEXT: {{^}}def k(lm, A: LM.tma2d, B: LM.tensor2d, n: LM.i32):
# CHECK-NEXT: {{^}}                       ^
# CHECK-NEXT: help: declare it as `LM.tma2d`
# CHECK-NEXT: argument_kind.cake:26:18: error: loops iterate over `lm.range(...)` [CAKE-T007]
# CHECK-NEXT: {{^}}        for i in n:
# CHECK-NEXT: {{^}}                 ^
# CHECK-NEXT: help: write `for i in lm.range(start, stop):`
# CHECK-NEXT: argument_kind.cake:29:13: error: this call returns nothing to assign [CAKE-T007]
# CHECK-NEXT: {{^}}        z = lm.fence_proxy()
# CHECK-NEXT: {{^}}            ^~~~~~~~~~~~~~~~
# CHECK-NEXT: argument_kind.cake:30:21: error: `a`: `sa` has 2 stages; select one with `sa[s]` [CAKE-T007]
# CHECK-NEXT: {{^}}        lm.mma(acc, sa, sa[0])
# CHECK-NEXT: {{^}}                    ^~
# CHECK-NEXT: argument_kind.cake:31:40: error: `init` expects a boolean (constant or runtime), got a runtime integer [CAKE-T007]
# CHECK-NEXT: {{^}}        lm.mma(acc, sa[0], sa[1], init=n)
# CHECK-NEXT: {{^}}                                       ^
# CHECK-NEXT: help: compare explicitly, e.g. `(k == 0)`
# CHECK-NOT: error
