"""examples/gemm_sm80.cake (cp.async + ldmatrix + mma.sync), emitted as sm_80 PTX and
JIT-compiled by the driver, on the same shape set as the Hopper GEMM: correct at every shape
class, every output element written and nothing outside C touched. Skipped without torch or
a GPU of sm_80 or newer.

    pytest -m gpu test/gpu
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available()
                       or torch.cuda.get_device_capability() < (8, 0),
                       reason="needs a GPU of sm_80 or newer"),
]

ROOT = Path(__file__).resolve().parents[2]
TOLERANCE = 5e-3  # bf16 rounding of C alone gives ~2e-3
# The shapes of test_gemm_gpu.py (M x N x K, K % 8 == 0: cp.async copies 16-byte rows).
SHAPES = [
    (1, 256, 64), (1, 4096, 4096), (128, 256, 16), (77, 333, 72), (300, 17, 8),
    (129, 257, 136), (1000, 1000, 1000), (1000, 3000, 1000), (2048, 512, 16),
    (1024, 1024, 8200), (4096, 4096, 4096), (8192, 8192, 8192),
]


@pytest.fixture(scope="module")
def kernel():
    spec = importlib.util.spec_from_file_location("gemm_sm80", ROOT / "examples" / "gemm_sm80.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ptx_kernel()


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_gemm_sm80_matches_reference(kernel, m, n, k):
    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    # C is a strided window of a NaN-filled buffer: its guard rows and columns catch writes
    # outside C, and NaN left inside C is an element never written.
    buf = torch.full((m + 2, n + 4), float("nan"), device="cuda", dtype=torch.bfloat16)
    c = buf[1:m + 1, 2:n + 2]
    kernel(a, b, c, m, n, k)
    torch.cuda.synchronize()
    assert int(torch.isnan(c).sum()) == 0, "some elements of C were never written"
    guard = buf.clone()
    guard[1:m + 1, 2:n + 2] = float("nan")
    assert int((~torch.isnan(guard)).sum()) == 0, "the kernel wrote outside C"
    ref = a.float() @ b.float().t()
    err = float((c.float() - ref).norm() / ref.norm())
    assert err < TOLERANCE, f"relative error {err:.2e}"


def test_ptx_is_sm80_at_its_lowest_version(kernel):
    ptx = kernel.cubin.decode(errors="replace")
    assert ".target sm_80" in ptx and ".version 7.1" in ptx
