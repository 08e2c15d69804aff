"""examples/gemm_bf16.cake on an sm_90a GPU: correct at every shape class (tails on every
side, M = 1, K = 16, fewer tiles than SMs, many laps of the persistent loop and of the
stage ring), every output element written and nothing outside C touched; bad arguments
are Python errors naming the parameter. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available()
                       or torch.cuda.get_device_capability() != (9, 0),
                       reason="needs an sm_90 (Hopper) GPU"),
]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gemm_bf16.cake"
TOLERANCE = 5e-3  # bf16 rounding of C alone gives ~2e-3

# M x N x K (K % 8 == 0: TMA needs 16-byte rows).
SHAPES = [
    (1, 256, 64),         # one row, one tile
    (1, 4096, 4096),      # one row, 16 tiles along N
    (128, 256, 16),       # K = 16: one k16 step, one partial stage
    (77, 333, 72),        # every dimension a tail, odd N (unpaired stores)
    (300, 17, 8),         # N and K below one instruction
    (129, 257, 136),      # one past the tile on M and N
    (1000, 1000, 1000),   # k_tiles = 16: not a multiple of the stages
    (1000, 3000, 1000),
    (2048, 512, 16),
    (1024, 1024, 8200),   # long K: many laps of the ring, K tail
    (4096, 4096, 4096),   # 512 tiles: several laps of the persistent loop per CTA
    (8192, 8192, 8192),
]


@pytest.fixture(scope="module")
def kernel():
    import cakec

    return cakec.compile(str(EXAMPLE), target="sm_90a")


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_gemm_matches_reference(kernel, m, n, k):
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


def test_wrong_dtype_names_the_parameter(kernel):
    from cakec.runtime import CakeArgumentError

    a = torch.randn(64, 64, device="cuda")  # f32, not bf16
    b = torch.randn(64, 64, device="cuda").to(torch.bfloat16)
    c = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(CakeArgumentError, match="'A'.*bf16"):
        kernel(a, b, c, 64, 64, 64)


def test_unaligned_rows_are_refused_before_launch(kernel):
    from cakec.runtime import CakeArgumentError

    a = torch.randn(64, 12, device="cuda").to(torch.bfloat16)  # 24-byte rows
    b = torch.randn(64, 12, device="cuda").to(torch.bfloat16)
    c = torch.empty(64, 64, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(CakeArgumentError, match="'A'.*multiple of 16"):
        kernel(a, b, c, 64, 64, 12)
