"""examples/gemm_bf16.cake and its ping-pong schedule gemm_bf16_pingpong.cake on an sm_90a
GPU: correct at every shape class (tails on every side, M = 1, K = 16, fewer tiles than SMs,
many laps of the persistent loop and of the stage ring), every output element written and
nothing outside C touched; bad arguments are Python errors naming the parameter. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

from gemm_check import SHAPES, check_gemm  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SCHEDULES = ["gemm_bf16", "gemm_bf16_pingpong"]


@pytest.fixture(scope="module", params=SCHEDULES)
def kernel(request):
    import cakec

    return cakec.compile(str(EXAMPLES / f"{request.param}.cake"), target="sm_90a")


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_gemm_matches_reference(kernel, m, n, k):
    check_gemm(kernel, m, n, k)


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
