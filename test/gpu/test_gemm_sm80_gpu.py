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

from gpu_marks import gpu_marks  # noqa: E402

from gemm_check import SHAPES, check_gemm  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc >= (8, 0), "needs a GPU of sm_80 or newer")

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kernel():
    spec = importlib.util.spec_from_file_location("gemm_sm80", ROOT / "examples" / "gemm_sm80.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ptx_kernel()


@pytest.mark.parametrize("m,n,k", SHAPES, ids=lambda v: str(v))
def test_gemm_sm80_matches_reference(kernel, m, n, k):
    check_gemm(kernel, m, n, k)


def test_ptx_is_sm80_at_its_lowest_version(kernel):
    ptx = kernel.cubin.decode(errors="replace")
    assert ".target sm_80" in ptx and ".version 7.1" in ptx
