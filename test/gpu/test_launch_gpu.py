"""The runtime's bind-once launch path on an sm_90a GPU (cakec/runtime/launch.py): a replayed
signature reads new data from the same buffers, a changed one is checked again, a CUDA graph
captures a replayed launch, and launches work on a given stream and from a fresh thread.

    pytest -m gpu test/gpu/test_launch_gpu.py
"""

from __future__ import annotations

import threading

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

from cakec.runtime import CakeArgumentError  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

M, N, K = 200, 300, 128


@pytest.fixture(scope="module")
def gemm():
    from cakec.kernels import build

    return build.kernel("gemm_bf16", "sm_90a")


def _fill(a, b, seed: int) -> None:
    g = torch.Generator(device="cuda").manual_seed(seed)
    a.copy_(torch.randn(a.shape, device="cuda", generator=g))
    b.copy_(torch.randn(b.shape, device="cuda", generator=g))


def _buffers():
    bf = dict(device="cuda", dtype=torch.bfloat16)
    a, b, c = torch.empty(M, K, **bf), torch.empty(N, K, **bf), torch.empty(M, N, **bf)
    _fill(a, b, 0)
    return a, b, c


def _check(a, b, c) -> None:
    torch.cuda.synchronize()
    ref = a.float() @ b.float().t()
    err = ((c.float() - ref).norm() / ref.norm()).item()
    assert err < 5e-3, err


def test_replay_reads_new_data_from_the_same_buffers(gemm):
    a, b, c = _buffers()
    gemm(a, b, c, M, N, K)
    _check(a, b, c)
    bound = len(gemm._binds)
    for seed in (1, 2):
        _fill(a, b, seed)
        c.fill_(float("nan"))
        gemm(a, b, c, M, N, K)
        _check(a, b, c)
    assert len(gemm._binds) == bound  # replayed, not bound again


def test_a_changed_signature_is_checked_again(gemm):
    a, b, c = _buffers()
    gemm(a, b, c, M, N, K)
    with pytest.raises(CakeArgumentError, match=r"'M' = 201 but A.shape\[0\] = 200"):
        gemm(a, b, c, M + 1, N, K)
    with pytest.raises(CakeArgumentError, match="'A': expected dtype bf16"):
        gemm(a.half(), b, c, M, N, K)
    wide = torch.empty(M, K + 8, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(CakeArgumentError, match="'A': data pointer .* not 16-byte aligned"):
        gemm(wide[:, 1:K + 1], b, c, M, N, K)
    with pytest.raises(CakeArgumentError, match="'A': tensor is on cpu"):
        gemm(a.cpu(), b, c, M, N, K)
    with pytest.raises(CakeArgumentError, match="'K'"):
        gemm(a, b, c, M, N, True)  # a bool never passes for the bound int
    torch.cuda.synchronize()  # nothing was launched, so nothing faulted


def test_cuda_graph_captures_a_replayed_launch(gemm):
    a, b, c = _buffers()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up: binds the signature outside the capture
        gemm(a, b, c, M, N, K)
    torch.cuda.current_stream().wait_stream(side)
    bound = len(gemm._binds)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        gemm(a, b, c, M, N, K)
    assert len(gemm._binds) == bound  # no bind (no tensor-map encode) inside the capture
    for seed in (3, 4, 5):
        _fill(a, b, seed)
        c.fill_(float("nan"))
        graph.replay()
        _check(a, b, c)


def test_launch_on_a_given_stream(gemm):
    a, b, c = _buffers()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    c.fill_(float("nan"))
    gemm(a, b, c, M, N, K, stream=s)
    s.synchronize()
    _check(a, b, c)
    c.fill_(float("nan"))
    gemm(a, b, c, M, N, K, stream=s.cuda_stream)  # a raw handle
    _check(a, b, c)


def test_launch_from_a_fresh_thread(gemm):
    """A new thread has no current CUDA context: the launch sets the kernel's and retries."""
    a, b, c = _buffers()
    gemm(a, b, c, M, N, K)
    torch.cuda.synchronize()
    c.fill_(float("nan"))
    torch.cuda.synchronize()
    errors: list[BaseException] = []

    def work():
        try:
            gemm(a, b, c, M, N, K)
            torch.cuda.synchronize()
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert not errors, errors
    _check(a, b, c)
