"""The register-tile vocabulary on an sm_90a GPU, against torch in float32: every element
function, arithmetic with broadcast (1, N) vectors and scalars, comparisons and `lm.where`
with index-tile masks, row reductions, `tma_store` of an expression, and a loop-carried
online log-sum-exp (running max and sum in `lm.regs` tiles), on fresh random inputs at
shapes with tails on every side (M, N not multiples of the 128 × 128 tile; K below the
64-wide stage). Each kernel is one 128 × 128 tile per CTA: S = X · Wᵀ (bf16 in, f32
accumulation), then the epilogue under test.

    pytest -m gpu test/gpu/test_tiles_gpu.py
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

# M, N, K (K % 8 == 0, K <= 64: one stage; TMA zero-fills the K tail).
SHAPES = [(128, 128, 64), (1, 5, 8), (77, 333, 40), (300, 17, 64), (129, 257, 16),
          (256, 1000, 64)]
#: The row reductions store one (M, 1) result per row tile, so their kernel reduces one
#: 128-column tile per row: N ≤ 128 (column tails included), rows with tails on every side.
ROW_SHAPES = [(128, 128, 64), (1, 5, 8), (77, 100, 40), (300, 17, 64), (129, 127, 16),
              (256, 65, 64)]
#: Relative tolerance: the element functions are .approx PTX instructions (ex2, lg2, tanh
#: rcp: relative errors ~2⁻²² … 2⁻¹¹), bf16 inputs are exact in f32.
RTOL, ATOL = 4e-3, 4e-3

# (surface expression, torch reference of S, bias, row, col) per elementwise output.
_ELEMENTWISE = [
    ("acc + bias", lambda s, b, r, c: s + b),
    ("acc * 2.0 - bias", lambda s, b, r, c: s * 2 - b),
    ("acc / (bias + 3.0)", lambda s, b, r, c: s / (b + 3)),
    ("lm.exp2(acc)", lambda s, b, r, c: torch.exp2(s)),
    ("lm.exp(acc)", lambda s, b, r, c: torch.exp(s)),
    ("lm.log2(lm.abs(acc) + 1.0)", lambda s, b, r, c: torch.log2(s.abs() + 1)),
    ("lm.log(lm.abs(acc) + 1.0)", lambda s, b, r, c: torch.log(s.abs() + 1)),
    ("lm.sqrt(lm.abs(acc))", lambda s, b, r, c: s.abs().sqrt()),
    ("lm.rsqrt(lm.abs(acc) + 1.0)", lambda s, b, r, c: torch.rsqrt(s.abs() + 1)),
    ("-acc + lm.neg(bias)", lambda s, b, r, c: -s - b),
    ("lm.tanh(acc)", lambda s, b, r, c: torch.tanh(s)),
    ("lm.sigmoid(acc)", lambda s, b, r, c: torch.sigmoid(s)),
    ("lm.relu(acc)", lambda s, b, r, c: torch.relu(s)),
    ("lm.gelu(acc + bias)", lambda s, b, r, c: torch.nn.functional.gelu(s + b, approximate="tanh")),
    ("lm.silu(acc)", lambda s, b, r, c: torch.nn.functional.silu(s)),
    ("lm.max(acc, bias)", lambda s, b, r, c: torch.maximum(s, b.expand_as(s))),
    ("lm.min(acc, 0.25)", lambda s, b, r, c: torch.clamp(s, max=0.25)),
    ("lm.where(col > row, -1.0, acc)", lambda s, b, r, c: torch.where(c > r, -1.0, s)),
    ("lm.where(acc >= 0.0 and col != row, acc, bias)",
     lambda s, b, r, c: torch.where((s >= 0) & (c != r), s, b.expand_as(s))),
]
# (method, fill outside N, torch reduction) per row reduction output (f32 or i32).
_REDUCTIONS = [
    ("sum", "0.0", lambda s: s.sum(1)),
    ("max", "-lm.inf", lambda s: s.max(1).values),
    ("min", "lm.inf", lambda s: s.min(1).values),
    ("argmax", "-lm.inf", lambda s: s.argmax(1)),
    ("argmin", "lm.inf", lambda s: s.argmin(1)),
]
_GROUP = 3  # outputs per kernel: one compile each (NVRTC time grows faster than linearly)


def _kernel(params: str, body: str) -> str:
    return f'''@cake.schedule(target="sm_90a")
def k(lm, X: LM.tma2d, W: LM.tma2d, Bias: LM.tensor2d, {params}M: LM.i32, N: LM.i32):
    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))
    mt = lm.block_id(0)
    nt = lm.block_id(1)
    pool = lm.smem(32768)
    sx = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sw = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=2)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    m_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    l_i = lm.regs(shape=(128, 1), dtype=lm.f32, role=math)
    with load:
        sx.tma_load(X, coords=(mt, 0), barrier=full)
        sw.tma_load(W, coords=(nt, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sx, sw, init=True)
        bias = Bias.load(coords=(0, nt), shape=(1, 128), dtype=lm.f32)
        row = lm.row_index(acc, base=mt * 128)
        col = lm.col_index(acc, base=nt * 128)
{body}'''


def elementwise_sources() -> list[tuple[str, list]]:
    out = []
    for g in range(0, len(_ELEMENTWISE), _GROUP):
        cases = _ELEMENTWISE[g:g + _GROUP]
        params = "".join(f"O{i}: LM.tensor2d, " for i in range(len(cases)))
        body = "".join(f"        O{i}.store({e}, coords=(mt, nt))\n"
                       for i, (e, _) in enumerate(cases))
        out.append((_kernel(params, body), cases))
    return out


def reduction_source() -> str:
    params = "".join(f"R{i}: LM.tensor2d, " for i in range(len(_REDUCTIONS))) + \
        "C: LM.tma2d, L: LM.tensor2d, "
    body = "".join(f"        R{i}.store(lm.where(col < N, acc, {fill}).{m}(axis=1), "
                   "coords=(0, mt))\n" for i, (m, fill, _) in enumerate(_REDUCTIONS))
    body += "        C.tma_store((acc + bias).to(lm.bf16), coords=(mt, nt))\n"
    # A loop-carried online log2-sum-exp2 over the tile scaled by 1, 2, 3.
    body += """        m_i = -lm.inf
        l_i = 0.0
        for t in lm.range(0, 3):
            s = lm.where(col < N, acc * (t + 1), -lm.inf)
            m_new = lm.max(m_i, s.max(axis=1))
            l_i = l_i * lm.exp2(m_i - m_new) + lm.exp2(s - m_new).sum(axis=1)
            m_i = m_new
        L.store(m_i + lm.log2(l_i), coords=(0, mt))
"""
    return _kernel(params, body)


def _inputs(m: int, n: int, k: int):
    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)
    x = (torch.randn(m, k, device="cuda", generator=gen) / math.sqrt(k)).to(torch.bfloat16)
    w = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    bias = torch.rand(1, n, device="cuda", generator=gen)
    s = x.float() @ w.float().t()
    rows = torch.arange(m, device="cuda").view(m, 1)
    cols = torch.arange(n, device="cuda").view(1, n)
    return x, w, bias, s, rows, cols


def _close(name: str, got, want) -> None:
    assert not torch.isnan(got).any(), f"{name}: NaN (an element never written)"
    err = (got - want).abs() - RTOL * want.abs()
    assert float(err.max()) <= ATOL, f"{name}: max error {float(err.max()):.2e}"


@pytest.fixture(scope="module")
def kernels():
    import cakec
    return ([(cakec.compile(source=src), cases) for src, cases in elementwise_sources()],
            cakec.compile(source=reduction_source()))


@pytest.mark.parametrize("m,n,k", SHAPES)
def test_elementwise(kernels, m: int, n: int, k: int) -> None:
    x, w, bias, s, rows, cols = _inputs(m, n, k)
    for kernel, cases in kernels[0]:
        bufs = [torch.full((m + 2, n + 2), float("nan"), device="cuda") for _ in cases]
        outs = [b[1:m + 1, 1:n + 1] for b in bufs]
        kernel(x, w, bias, *outs, m, n)
        torch.cuda.synchronize()
        for (expr, ref), b, o in zip(cases, bufs, outs):
            _close(expr, o, ref(s, bias, rows, cols))
            guard = b.clone()
            guard[1:m + 1, 1:n + 1] = float("nan")
            assert torch.isnan(guard).all(), f"{expr}: wrote outside its output"


@pytest.mark.parametrize("m,n,k", ROW_SHAPES)
def test_reductions_tma_store_and_online_logsumexp(kernels, m: int, n: int, k: int) -> None:
    x, w, bias, s, rows, cols = _inputs(m, n, k)
    outs = [torch.full((1, m), float("nan"), device="cuda") if not name.startswith("arg")
            else torch.full((1, m), -1, device="cuda", dtype=torch.int32)
            for name, _, _ in _REDUCTIONS]
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    lse = torch.full((1, m), float("nan"), device="cuda")
    kernels[1](x, w, bias, *outs, c, lse, m, n)
    torch.cuda.synchronize()
    for (name, _, ref), o in zip(_REDUCTIONS, outs):
        got = o[0, :m]
        if name.startswith("arg"):  # the chosen column holds the extreme value
            picked = s.gather(1, got.long().view(m, 1)).view(m)
            _close(name, picked, s.gather(1, ref(s).view(m, 1)).view(m))
        else:
            _close(name, got, ref(s))
    _close("tma_store((acc + bias).to(bf16))", c.float(), (s + bias).bfloat16().float())
    stacked = torch.cat([s * t for t in (1, 2, 3)], dim=1)
    _close("online log2-sum-exp2", lse[0, :m], torch.logsumexp(stacked * math.log(2), 1)
           / math.log(2))
