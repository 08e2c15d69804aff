"""`view[s].store(tile)` on an sm_90a GPU: two MMAs chained through SMEM. Each CTA computes
E = (A·Bᵀ).to(bf16) by wgmma into registers, stores E into a stage of the view's swizzle
(128b, 64b, 32b), fences (`lm.fence_proxy()`: each thread, then the role's named barrier), and
computes O = E·Dᵀ by wgmma reading E from that stage. Checked against a float64 reference of
the same bf16 rounding on fresh random inputs, with a row tail (M not a multiple of 128).

    pytest -m gpu test/gpu/test_stage_store_gpu.py
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

SWIZZLES = ("128b", "64b", "32b")
ROWS = (128, 300, 1, 1000)


def source(swizzle: str) -> str:
    return f'''@cake.schedule(target="sm_90a")
def chain(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d, M: LM.i32):
    lm.grid(lm.cdiv(M, 128))
    mt = lm.block_id(0)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    se = pool.view(offset=49152, shape=(128, 128), dtype=lm.bf16, swizzle={swizzle})
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(mt, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        se[0].store((acc * 0.5).to(lm.bf16))
        lm.fence_proxy()
        lm.mma(out, se, sd, init=True)
        O.store(out, coords=(mt, 0))
'''


@pytest.fixture(scope="module")
def kernels():
    import cakec
    return {swz: cakec.compile(source=source(swz)) for swz in SWIZZLES}


@pytest.mark.parametrize("swizzle", SWIZZLES)
@pytest.mark.parametrize("m", ROWS)
def test_mma_chained_through_a_stored_stage(kernels, swizzle: str, m: int) -> None:
    gen = torch.Generator(device="cuda").manual_seed(1000 * m + len(swizzle))
    a = torch.randn(m, 64, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(128, 64, device="cuda", generator=gen).to(torch.bfloat16)
    d = torch.randn(64, 128, device="cuda", generator=gen).to(torch.bfloat16)
    o = torch.full((m, 64), float("nan"), device="cuda")
    kernels[swizzle](a, b, d, o, m)
    torch.cuda.synchronize()
    e = (a.double() @ b.double().t() * 0.5).to(torch.bfloat16).double()
    want = e @ d.double().t()
    assert not torch.isnan(o).any(), "an element of O was never written"
    # E is bf16 on both sides; what differs is the f32 accumulation order of the wgmmas and
    # a rare bf16 rounding tie of E: a relative Frobenius error well under bf16's 2⁻⁸.
    err = float((o.double() - want).norm() / want.norm())
    assert err < 2e-3, f"relative error {err:.2e} (swizzle {swizzle}, M = {m})"


def transposed_source(swizzle: str) -> str:
    """acc = Kᵀ·U with K, U stored [C, D] (C = 64 rows, the reduction): both operands read
    MN-major, `sk[0].T` as A ([D, C]) and `su.T` as B ([D, C]), as the KDA state update
    reads its chunk's keys and values."""
    return f'''@cake.schedule(target="sm_90a")
def ktu(lm, K: LM.tma2d, U: LM.tma2d, O: LM.tensor2d):
    pool = lm.smem(65536)
    sk = pool.view(offset=0, shape=(64, 128), dtype=lm.bf16, swizzle={swizzle})
    su = pool.view(offset=16384, shape=(64, 128), dtype=lm.bf16, swizzle={swizzle})
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sk.tma_load(K, coords=(0, 0), barrier=full)
        su.tma_load(U, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sk[0].T, su.T, init=True)
        O.store(acc, coords=(0, 0))
'''


@pytest.fixture(scope="module")
def transposed_kernels():
    import cakec
    return {swz: cakec.compile(source=transposed_source(swz)) for swz in SWIZZLES}


@pytest.mark.parametrize("swizzle", SWIZZLES)
@pytest.mark.parametrize("seed", (1, 2, 3))
def test_mma_reads_transposed_operands(transposed_kernels, swizzle: str, seed: int) -> None:
    gen = torch.Generator(device="cuda").manual_seed(seed)
    k = torch.randn(64, 128, device="cuda", generator=gen).to(torch.bfloat16)
    u = torch.randn(64, 128, device="cuda", generator=gen).to(torch.bfloat16)
    o = torch.full((128, 128), float("nan"), device="cuda")
    transposed_kernels[swizzle](k, u, o)
    torch.cuda.synchronize()
    want = k.double().t() @ u.double()
    err = float((o.double() - want).norm() / want.norm())
    assert err < 1e-5, f"relative error {err:.2e} (swizzle {swizzle})"


TMA_STORE_SOURCE = '''@cake.schedule(target="sm_90a")
def staged(lm, A: LM.tma2d, B: LM.tma2d, O: LM.tma2d, M: LM.i32, N: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    mt = lm.block_id(0)
    nt = lm.block_id(1)
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    so = pool.view(offset=32768, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(mt, 0), barrier=full)
        sb.tma_load(B, coords=(nt, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        so[0].store((acc + 1.0).to(lm.bf16))
        lm.fence_proxy()
        O.tma_store(so[0], coords=(mt, nt))
'''


def _staged_store(source: str, m: int, n: int, seed: int):
    """(A, B, the NaN-filled buffer whose [:m, :n] view was O) after one launch of `source`
    (TMA_STORE_SOURCE's parameters) on fresh random A [m, 64] and B [n, 64]."""
    import cakec
    kernel = cakec.compile(source=source)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, 64, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, 64, device="cuda", generator=gen).to(torch.bfloat16)
    buf = torch.full((m + 1, n + 8), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, buf[:m, :n], m, n)
    torch.cuda.synchronize()
    return a, b, buf


@pytest.mark.parametrize("m,n", [(128, 128), (300, 200), (1, 8), (257, 1000)])
def test_tma_store_of_a_staged_view(m: int, n: int) -> None:
    """O through SMEM: the tile stored into a 128b-swizzled stage, then one TMA store per
    64-column block, clipped by the TMA unit at the tensor's edges (row and column tails)."""
    a, b, buf = _staged_store(TMA_STORE_SOURCE, m, n, m * 31 + n)
    o = buf[:m, :n]
    want = (a.double() @ b.double().t() + 1).to(torch.bfloat16).double()
    assert not torch.isnan(o).any(), "an element of O was never written"
    err = float((o.double() - want).abs().max() / want.abs().max())
    assert err < 1e-2, f"max error {err:.2e} relative to max |O|"
    assert torch.isnan(buf[m:]).all() and torch.isnan(buf[:m, n:]).all(), \
        "the TMA store wrote outside O"


@pytest.mark.parametrize("m,n", [(300, 200), (257, 1000), (129, 136), (1, 8)])
def test_tma_store_of_a_tile_outside_writes_nothing(m: int, n: int) -> None:
    """Each CTA stores its tile at the tile before its own, (mt − 1, nt − 1): the first row
    and column of CTAs aim at coordinate −1, which the TMA unit faults on; those boxes are
    not issued (test/distilled/tma_store_outside.cake), the others land one tile up-left."""
    src = TMA_STORE_SOURCE.replace("coords=(mt, nt))", "coords=(mt - 1, nt - 1))")
    assert src != TMA_STORE_SOURCE
    a, b, buf = _staged_store(src, m, n, m * 17 + n)
    o = buf[:m, :n]
    tm, tn = -(-m // 128), -(-n // 128)
    ap = torch.zeros(tm * 128, 64, device="cuda", dtype=torch.float64)
    bp = torch.zeros(tn * 128, 64, device="cuda", dtype=torch.float64)
    ap[:m], bp[:n] = a.double(), b.double()
    full = (ap @ bp.t() + 1).to(torch.bfloat16).double()  # what every CTA computes
    rows, cols = min(m, (tm - 1) * 128), min(n, (tn - 1) * 128)  # the tiles written
    got = o[:rows, :cols].double()
    want = full[128:128 + rows, 128:128 + cols]
    assert not torch.isnan(got).any(), "an element of O was never written"
    if rows and cols:
        err = float((got - want).abs().max() / want.abs().max())
        assert err < 1e-2, f"max error {err:.2e} relative to max |O|"
    assert torch.isnan(o[rows:]).all() and torch.isnan(o[:, cols:]).all(), \
        "a tile nobody stores to was written"
    assert torch.isnan(buf[m:]).all() and torch.isnan(buf[:m, n:]).all(), \
        "the TMA store wrote outside O"
