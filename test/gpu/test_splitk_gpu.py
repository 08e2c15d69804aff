"""Split-K on an sm_90a GPU: the `T.split_store` kernels (cakec/kernels/gemm_bf16_splitk*.cake,
the swap-AB ones storing transposed, the *_tail ones splitting only the last wave's tiles)
against a float32 product, with fresh random inputs per case, tails in M, N and K, K not a
multiple of the parts, more parts than K stages, M = 1; the counters back at zero after every
launch, the sum bitwise the same from launch to launch (the last CTA adds the parts in
order), nothing written outside C; and `split_parts`' choice.

    pytest -m gpu test/gpu/test_splitk_gpu.py
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

BF = dict(device="cuda", dtype=torch.bfloat16)
#: kernel -> its tile of C (the swap-AB kernel computes Cᵀ by (64, 16) tiles).
KERNELS = {"gemm_bf16_splitk": (128, 128), "gemm_bf16_splitk_decode": (64, 64),
           "gemm_bf16_splitk_n128": (64, 128), "gemm_bf16_splitk_swap": (16, 64),
           "gemm_bf16_splitk_swap_tail": (16, 64), "gemm_bf16_splitk_decode_tail": (64, 64),
           "gemm_bf16_splitk_n128_tail": (64, 128)}
#: (M, N, K, S): K tiles of 64 split into S parts (7 tiles in 3 or 4: uneven; S above the K
#: tiles: clamped), tails everywhere, M = 1.
CASES = [(1, 256, 4096, 2), (1, 4096, 4096, 4), (3, 300, 448, 3), (64, 4096, 1024, 16),
         (100, 1000, 1000, 4), (129, 257, 8, 5), (200, 520, 4104, 7), (256, 4096, 2048, 2),
         (1000, 300, 448, 4), (17, 130, 64, 1), (65, 200, 136, 40),
         # more tiles than SMs: the *_tail kernels run whole waves unsplit and split the rest
         (7, 11008, 520, 3), (130, 9000, 264, 2)]


def _rel(x, ref) -> float:
    return ((x.float() - ref).norm() / ref.norm().clamp(min=1e-30)).item()


@pytest.mark.parametrize("name", sorted(KERNELS))
@pytest.mark.parametrize("m,n,k,s", CASES)
def test_split_store_sums_every_part(name, m, n, k, s):
    from cakec.kernels import build

    kern = build.kernel(name, "sm_90a")
    tm, tn = KERNELS[name]
    tiles = -(-m // tm) * -(-n // tn)
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    ref = a.float() @ b.float().t()
    # C inside a larger buffer: the rows and columns around it must stay untouched.
    big = torch.full((m + 2, n + 8), 7.0, **BF)
    c = big[1:m + 1, 4:n + 4]
    w = torch.full((s, m, n), float("nan"), device="cuda")  # every read part was written
    counters = torch.zeros(tiles + 3, device="cuda", dtype=torch.int32)
    results = []
    for _ in range(3):
        c.fill_(float("nan"))
        kern(a, b, c, w, counters, m, n, k, s)
        torch.cuda.synchronize()
        assert not c.isnan().any(), (name, m, n, k, s)
        assert _rel(c, ref) < 5e-3, (name, m, n, k, s)
        assert not counters.any(), counters.nonzero()
        results.append(c.clone())
    assert all(torch.equal(results[0], r) for r in results[1:])
    big[1:m + 1, 4:n + 4] = 7.0
    assert (big == 7.0).all()


def test_gemm_split_routes_reuse_their_scratch_per_stream():
    """The split-K route of gemm() keeps one workspace and one set of counters per device,
    stream and shape, correct across streams."""
    import importlib

    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = 16, 4096, 4096
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    ref = a.float() @ b.float().t()
    run = G.launcher(G.table(), "splitk_64x64", a, m, n, k)
    outs = []
    for stream in (torch.cuda.current_stream(), torch.cuda.Stream()):
        with torch.cuda.stream(stream):
            for _ in range(2):
                c = torch.empty(m, n, **BF)
                run(a, b, c, m, n, k)
                outs.append(c)
    torch.cuda.synchronize()
    assert all(_rel(c, ref) < 5e-3 for c in outs)
    keys = [key for key in G._split if key[2:] == (2, m, n, 64) and key[0] == a.get_device()]
    assert len(keys) == 2  # one per stream


@pytest.mark.parametrize("route", ["splitk_64x64", "splitk_64x128", "splitk_swap_16x64",
                                   "splitk_128x128"])
def test_split_route_under_cuda_graph_replay(route):
    """Captured once (the scratch of the capture stream is allocated, zeroed, inside the
    capture), replayed with new data in the same buffers: the counters are back at zero
    after every replay, so each replay sums its own partials."""
    import importlib

    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = 16, 4096, 4096
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    c = torch.empty(m, n, **BF)
    run = G.launcher(G.table(), route, a, m, n, k)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run(a, b, c, m, n, k)  # binds the kernel outside the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        run(a, b, c, m, n, k)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        graph.replay()
        torch.cuda.synchronize()
        assert _rel(c, a.float() @ b.float().t()) < 5e-3
