"""16-bit `lm.regs` tiles on an sm_90a GPU: p = (A·Bᵀ · 0.5).to(bf16) assigned once into a
packed bf16 register tile (two columns per register), then read T times as the register A of
a wgmma (O = Σ_t p·Dᵀ = T · p·Dᵀ) and once as f32 (its row maxima, stored). Checked against a
float64 reference of the same bf16 rounding on fresh random inputs.

    pytest -m gpu test/gpu/test_regs16_gpu.py
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

SOURCE = '''@cake.schedule(target="sm_90a")
def regs16(lm, A: LM.tma2d, B: LM.tma2d, D: LM.tma2d, O: LM.tensor2d, R: LM.tensor2d, T: LM.i32):
    pool = lm.smem(65536)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sb = pool.view(offset=16384, shape=(128, 64), dtype=lm.bf16, swizzle=128b)
    sd = pool.view(offset=32768, shape=(64, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    full = lm.barrier(count=1, prod=[load], cons=[math], init_count=3)
    acc = lm.regs(shape=(128, 128), dtype=lm.f32, role=math)
    p = lm.regs(shape=(128, 128), dtype=lm.bf16, role=math)
    out = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with load:
        sa.tma_load(A, coords=(0, 0), barrier=full)
        sb.tma_load(B, coords=(0, 0), barrier=full)
        sd.tma_load(D, coords=(0, 0), barrier=full)
    with math:
        lm.wait(full)
        lm.mma(acc, sa, sb, init=True)
        p = (acc * 0.5).to(lm.bf16)
        for t in lm.range(0, lm.max(T, 1)):
            lm.mma(out, p, sd, init=(t == 0))
        O.store(out, coords=(0, 0))
        R.store(p.to(lm.f32).max(axis=1), coords=(0, 0))
'''


@pytest.mark.parametrize("seed,t", [(1, 1), (2, 3), (3, 2)])
def test_packed_bf16_register_tile(seed: int, t: int) -> None:
    import cakec
    kernel = cakec.compile(source=SOURCE)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(128, 64, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(128, 64, device="cuda", generator=gen).to(torch.bfloat16)
    d = torch.randn(64, 128, device="cuda", generator=gen).to(torch.bfloat16)
    o = torch.full((128, 64), float("nan"), device="cuda")
    r = torch.full((1, 128), float("nan"), device="cuda")
    kernel(a, b, d, o, r, t)
    torch.cuda.synchronize()
    p = (a.double() @ b.double().t() * 0.5).to(torch.bfloat16).double()
    want = t * (p @ d.double().t())
    err = float((o.double() - want).norm() / want.norm())
    assert err < 2e-3, f"relative error {err:.2e}"
    # The row maxima read the packed registers back as f32: bf16 values, compared exactly
    # except where a rounding tie of p differs from the reference's.
    assert float((r[0].double() - p.max(1).values).abs().max()) <= \
        float(p.abs().max()) * 2 ** -7
