"""The wgmma forms beyond bf16 N ∈ {64, 128, 192, 256} on an sm_90a GPU: N = 96, 8 and 24,
tf32 (k8), e4m3 × e4m3 → f32 (k32) and s8 × s8 → s32 (k32), each a small one-warpgroup GEMM
of test/gpu/mma_forms/mma_wgmma_*.cake checked against a float64 (or exact integer) reference
on fresh random inputs, at shapes with tails on every side and K not a multiple of the tile.
C is a window of a NaN- (or sentinel-) filled buffer, so unwritten elements and writes
outside C are caught. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_mma_forms_gpu.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

CORPUS = Path(__file__).resolve().parent / "mma_forms"
#: kernel -> (operand dtype, K granule: 16-byte TMA rows, relative-error tolerance).
FORMS = {
    "mma_wgmma_n96_bf16": ("bf16", 8, 1e-4),
    "mma_wgmma_n8_bf16": ("bf16", 8, 1e-4),
    "mma_wgmma_n24_f16": ("f16", 8, 1e-4),
    "mma_wgmma_tf32": ("tf32", 4, 5e-3),  # operands truncated to tf32 (10-bit mantissa)
    # Hopper's FP8 wgmma accumulates in reduced precision (about 14 mantissa bits, as the
    # DeepSeek-V3 report measured): 2.9e-4 at 1000 × 700 × 400 on the H200, while a layout
    # or descriptor error gives O(1).
    "mma_wgmma_e4m3": ("e4m3", 16, 2e-3),
    "mma_wgmma_s8": ("i8", 16, 0.0),  # exact
}
SHAPES = [(64, 96, 64), (1, 8, 16), (77, 333, 144), (130, 50, 1000), (256, 264, 48),
          (1000, 700, 400)]


def _operand(dtype: str, rows: int, k: int, gen):
    if dtype == "i8":
        return torch.randint(-8, 8, (rows, k), device="cuda", generator=gen, dtype=torch.int8)
    x = torch.randn(rows, k, device="cuda", generator=gen)
    return {"bf16": x.to(torch.bfloat16), "f16": x.to(torch.float16), "tf32": x,
            "e4m3": x.to(torch.float8_e4m3fn)}[dtype]


@pytest.fixture(scope="module")
def kernels():
    import cakec

    return {name: cakec.compile(str(CORPUS / f"{name}.cake"), target="sm_90a") for name in FORMS}


@pytest.mark.parametrize("name", list(FORMS))
@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_mma_form_matches_reference(kernels, name, m, n, k):
    dtype, granule, tol = FORMS[name]
    k = -(-k // granule) * granule
    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)
    a, b = _operand(dtype, m, k, gen), _operand(dtype, n, k, gen)
    out = torch.int32 if dtype == "i8" else torch.float32
    fill = -(2**31) if dtype == "i8" else float("nan")
    buf = torch.full((m + 2, n + 4), fill, device="cuda", dtype=out)
    c = buf[1:m + 1, 2:n + 2]
    kernels[name](a, b, c, m, n, k)
    torch.cuda.synchronize()
    unwritten = (c == fill) if dtype == "i8" else torch.isnan(c)
    assert int(unwritten.sum()) == 0, "some elements of C were never written"
    guard = buf.clone()
    guard[1:m + 1, 2:n + 2] = fill
    assert bool((guard == fill).all() if dtype == "i8" else torch.isnan(guard).all()), \
        "the kernel wrote outside C"
    if dtype == "i8":
        ref = a.cpu().long() @ b.cpu().long().t()  # CUDA has no int64 matmul
        assert torch.equal(c.cpu().long(), ref)
        return
    ref = a.double() @ b.double().t()
    err = float((c.double() - ref).norm() / ref.norm())
    assert err < tol, f"relative error {err:.2e}"
