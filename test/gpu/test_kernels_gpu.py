"""cakec.kernels on an sm_90a GPU: gemm and kmeans_assign against torch, every bad input a
clear error, the torch ops under opcheck, torch.compile(fullgraph=True) and CUDA graphs,
and the Lloyd loop against a torch one.

    pytest -m gpu test/gpu/test_kernels_gpu.py
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

from cakec.runtime import CakeArgumentError  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

ROOT = Path(__file__).resolve().parents[2]
BF = dict(device="cuda", dtype=torch.bfloat16)


@pytest.fixture(scope="module")
def K():
    import cakec.kernels as kernels

    return kernels


@pytest.fixture(scope="module")
def example():
    """examples/kmeans_assign.py, for its float64 distance check."""
    from cakec.api import load_example

    return load_example(str(ROOT / "examples" / "kmeans_assign.cake"))


def _rel(x, ref) -> float:
    return ((x.float() - ref).norm() / ref.norm().clamp(min=1e-30)).item()


@pytest.mark.parametrize("m,n,k", [(1, 256, 64), (200, 300, 128), (1000, 3000, 1000),
                                   (129, 257, 8)])
def test_gemm_matches_torch(K, m, n, k):
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    ref = a.float() @ b.float().t()
    assert _rel(K.gemm(a, b), ref) < 5e-3
    out = torch.full((m, n), float("nan"), **BF)
    assert K.gemm(a, b, out=out) is out and _rel(out, ref) < 5e-3
    bias = torch.randn(n, device="cuda")
    assert _rel(K.gemm(a, b, bias=bias), ref + bias) < 5e-3


def test_gemm_empty_extents(K):
    assert K.gemm(torch.empty(0, 64, **BF), torch.randn(8, 64, **BF)).shape == (0, 8)
    assert torch.equal(K.gemm(torch.empty(3, 0, **BF), torch.empty(5, 0, **BF)),
                       torch.zeros(3, 5, **BF))


def test_gemm_bad_inputs(K):
    a, b = torch.randn(64, 64, **BF), torch.randn(32, 64, **BF)
    cases = [
        ((a.float(), b), "a has dtype torch.float32"),
        ((a.cpu(), b), "a is on cpu"),
        ((a[None], b), "a has shape .* expected rank 2"),
        ((a, b.t().contiguous().t()), "b is not contiguous along its last dimension"),
        ((torch.randn(64, 72, **BF)[:, 1:65], b), "a needs a 16-byte aligned start"),
        ((torch.randn(64, 60, **BF), torch.randn(32, 60, **BF)), "rows a multiple of 16 bytes"),
        ((a, torch.randn(32, 72, **BF)), r"a.shape\[1\] and b.shape\[1\] \(K\) disagree"),
        ((a, "b"), "b must be a torch.Tensor"),
    ]
    for args, message in cases:
        with pytest.raises(CakeArgumentError, match=message):
            K.gemm(*args)
    with pytest.raises(CakeArgumentError, match=r"out has shape \[64, 31\]"):
        K.gemm(a, b, out=torch.empty(64, 31, **BF))
    with pytest.raises(CakeArgumentError, match="bias has shape"):
        K.gemm(a, b, bias=torch.randn(31, device="cuda"))


@pytest.mark.parametrize("b,n,k,d", [(1, 1, 1, 8), (3, 1000, 300, 72), (2, 4096, 1111, 128),
                                     (2, 500, 130, 64)])
def test_kmeans_assign_by_distance(K, example, b, n, k, d):
    x, c = torch.randn(b, n, d, **BF), torch.randn(b, k, d, **BF)
    idx, dist = K.kmeans_assign(x, c)
    assert idx.dtype == torch.int32 and dist.dtype == torch.float32 and idx.shape == (b, n)
    assert example.check(x, c, idx, dist) == {"choice": 0, "dist": 0}
    csq = K.csq_buffer(b, k, "cuda")
    csq.copy_((c.float() ** 2).sum(-1))
    idx2, dist2 = K.kmeans_assign(x, c, c_sq=csq)
    assert torch.equal(idx, idx2)
    i1, d1 = K.kmeans_assign(x[0], c[0])  # unbatched
    assert torch.equal(i1, idx[0]) and torch.equal(d1, dist[0])


def test_kmeans_assign_bad_inputs(K):
    x, c = torch.randn(2, 100, 64, **BF), torch.randn(2, 10, 64, **BF)
    cases = [
        ((x.float(), c), "x has dtype"),
        ((x, c[0]), "c has shape .* expected rank 3"),
        ((x, torch.randn(3, 10, 64, **BF)), "batch sizes of x and c disagree"),
        ((x, torch.randn(2, 10, 72, **BF)), "dimensions D of x and c disagree"),
        ((torch.randn(2, 100, 136, **BF), torch.randn(2, 10, 136, **BF)), "D = 136"),
        ((x, torch.empty(2, 0, 64, **BF)), "no centroids"),
        ((x.cpu(), c), "x is on cpu"),
        ((x.transpose(1, 2).contiguous().transpose(1, 2), c), "not contiguous"),
    ]
    for args, message in cases:
        with pytest.raises(CakeArgumentError, match=message):
            K.kmeans_assign(*args)
    with pytest.raises(CakeArgumentError, match=r"c_sq has shape \[2, 9\]"):
        K.kmeans_assign(x, c, c_sq=K.csq_buffer(2, 9, "cuda"))
    with pytest.raises(CakeArgumentError, match="c_sq needs a 16-byte aligned"):
        K.kmeans_assign(x, c, c_sq=torch.empty(2, 10, device="cuda"))  # 40-byte rows


def test_opcheck(K):
    from torch.library import opcheck

    a, b = torch.randn(100, 64, **BF), torch.randn(300, 64, **BF)
    opcheck(torch.ops.cake.gemm.default, (a, b))
    opcheck(torch.ops.cake.gemm_out.default, (a, b, torch.empty(100, 300, **BF)))
    x, c = torch.randn(2, 500, 128, **BF), torch.randn(2, 40, 128, **BF)
    opcheck(torch.ops.cake.kmeans_assign.default, (x, c, None))
    csq = K.csq_buffer(2, 40, "cuda")
    csq.copy_((c.float() ** 2).sum(-1))
    opcheck(torch.ops.cake.kmeans_assign.default, (x, c, csq))


def test_torch_compile_fullgraph(K):
    def f(a, b, x, c):
        idx, dist = K.kmeans_assign(x, c)
        return K.gemm(a, b) * 2, idx, dist.sqrt()

    a, b = torch.randn(128, 64, **BF), torch.randn(256, 64, **BF)
    x, c = torch.randn(2, 300, 64, **BF), torch.randn(2, 17, 64, **BF)
    got = torch.compile(f, fullgraph=True)(a, b, x, c)
    want = f(a, b, x, c)
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
    assert torch.allclose(got[2], want[2])


def test_cuda_graph_of_the_library(K, example):
    a, b = torch.randn(128, 64, **BF), torch.randn(256, 64, **BF)
    x, c = torch.randn(2, 300, 64, **BF), torch.randn(2, 17, 64, **BF)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        K.gemm(a, b)
        K.kmeans_assign(x, c)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = K.gemm(a, b)
        idx, dist = K.kmeans_assign(x, c)
    for _ in range(2):
        a.copy_(torch.randn_like(a))
        x.copy_(torch.randn_like(x))
        c.copy_(torch.randn_like(c))
        graph.replay()
        torch.cuda.synchronize()
        assert _rel(out, a.float() @ b.float().t()) < 5e-3
        assert example.check(x, c, idx, dist) == {"choice": 0, "dist": 0}


def _torch_lloyd(x, c, iters):
    b, n, d = x.shape
    xf = x.float()
    for _ in range(iters):
        cb = c.to(torch.bfloat16).float()
        dist = (xf * xf).sum(-1, keepdim=True) + (cb * cb).sum(-1)[:, None] - 2 * xf @ cb.transpose(1, 2)
        idx = dist.argmin(-1)
        sums = torch.zeros_like(c).scatter_add_(1, idx[..., None].expand(b, n, d), xf)
        counts = torch.zeros(c.shape[:2], device=x.device).scatter_add_(
            1, idx, torch.ones_like(idx, dtype=torch.float32))
        c = torch.where(counts[..., None] > 0, sums / counts.clamp(min=1)[..., None], c)
    return c


def test_kmeans_lloyd(K, example):
    g = torch.Generator(device="cuda").manual_seed(0)
    b, k, d = 2, 8, 64
    centers = torch.randn(b, k, d, device="cuda", generator=g) * 10
    labels = torch.randint(0, k, (b, 2000), device="cuda", generator=g)
    x = (centers.gather(1, labels[..., None].expand(b, 2000, d))
         + torch.randn(b, 2000, d, device="cuda", generator=g)).to(torch.bfloat16)
    init = x[:, :k].float().clone()
    init[:, -1] = 1e4  # far from every point: stays empty, keeps its place
    c, idx, dist = K.kmeans(x, k, iters=5, init=init)
    assert torch.equal(c[:, -1], init[:, -1])
    ref = _torch_lloyd(x, init, 5)
    assert torch.allclose(c[:, :-1], ref[:, :-1], rtol=1e-2, atol=5e-2)
    assert example.check(x, c.to(torch.bfloat16), idx, dist) == {"choice": 0, "dist": 0}
    c2, idx2, _ = K.kmeans(x[0], k, iters=3, generator=torch.Generator().manual_seed(1))
    assert c2.shape == (k, d) and idx2.shape == (2000,)
    for kw, message in [({"iters": -1}, "iters = -1"), ({"init": init.cpu()}, "init is .* on cpu"),
                        ({"init": init[:, :3]}, "init has shape"), ({"init": "kmeans++"},
                                                                     "neither 'random'")]:
        with pytest.raises(CakeArgumentError, match=message):
            K.kmeans(x, k, **kw)


def test_kernels_are_cached_on_disk(K):
    from cakec.kernels import build
    from cakec.targets.host.nvrtc import cache_dir

    K.gemm(torch.randn(8, 64, **BF), torch.randn(8, 64, **BF))
    entries = list((cache_dir() / "kernels").glob("gemm_bf16-sm_90a-*"))
    assert {p.suffix for p in entries} == {".cubin", ".json"}
    fresh = build._build("gemm_bf16", "sm_90a")  # from disk: no front end
    assert fresh.cubin == build.kernel("gemm_bf16", "sm_90a").cubin


GEMM_ROUTE_SHAPES = [(1, 256, 64), (7, 300, 136), (64, 4096, 512), (100, 1000, 1000),
                     (129, 257, 8), (300, 520, 4104), (1000, 3000, 1000)]


@pytest.mark.parametrize("route", ["persistent_128x256", "persistent_128x128", "skinny_64x32",
                                   "skinny_64x64", "splitk_128x128", "splitk_64x64",
                                   "splitk_64x128", "splitk_swap_16x64",
                                   "splitk_64x64_waves", "splitk_swap_16x64_waves",
                                   "splitk_swap_16x64_k256", "splitk_swap_16x64_pp",
                                   "splitk_64x64_pp", "splitk_swap_16x64_tail",
                                   "splitk_64x64_tail", "splitk_64x128_tail",
                                   "persistent_128x256_mc", "persistent_128x224",
                                   "persistent_128x224_mc"])
def test_every_gemm_route_computes_every_shape(K, route):
    """Each Cake route of the gemm table is correct for any M, N, K (the table may send any
    shape to any of them): tails in every dimension, every element written, twice (a
    split-K route's counters are back at zero after each call)."""
    G = importlib.import_module("cakec.kernels.gemm")  # the module (the package's `gemm` is the function)
    for m, n, k in GEMM_ROUTE_SHAPES:
        a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
        run = G.launcher(G.table(), route, a, m, n, k)
        for _ in range(2):
            c = torch.full((m, n), float("nan"), **BF)
            run(a, b, c, m, n, k)
            assert not c.isnan().any(), (route, m, n, k)
            assert _rel(c, a.float() @ b.float().t()) < 5e-3, (route, m, n, k)

def _route_computes_twice(G, route: str, m: int, n: int, k: int) -> None:
    """`route`'s launcher, called twice on fresh NaN-filled outputs, writes every element of
    C = A·Bᵀ (f32 reference)."""
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    run = G.launcher(G.table(), route, a, m, n, k)
    for _ in range(2):
        c = torch.full((m, n), float("nan"), **BF)
        run(a, b, c, m, n, k)
        assert not c.isnan().any() and _rel(c, a.float() @ b.float().t()) < 5e-3, (route, m, n, k)



@pytest.mark.parametrize("route", ["persistent_128x256_mc", "persistent_128x224",
                                   "persistent_128x224_mc"])
def test_cluster_and_224_routes_over_many_items(K, route):
    """More items than the grid holds (each CTA, or CTA pair, runs several and its ring
    continues across them), a ragged last M pair (17 M tiles: the rank-1 CTA of the last
    pair computes past M and stores nothing), N and K tails."""
    G = importlib.import_module("cakec.kernels.gemm")
    _route_computes_twice(G, route, 2100, 4000, 520)


@pytest.mark.parametrize("route", ["splitk_64x64_waves", "splitk_swap_16x64_waves",
                                   "splitk_swap_16x64_pp", "splitk_64x64_pp"])
@pytest.mark.parametrize("shape", [(7, 11008, 4096), (1, 5120, 5120), (64, 28672, 4096)])
def test_split_routes_over_several_waves_compute(K, route, shape):
    """The waves routes at shapes where their split fills several waves of units (each CTA
    runs several units, their partials reduced by whichever CTA arrives last), twice."""
    from cakec.runtime import routes

    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = shape
    tile = G.table().split_tile(route)
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert tiles * routes.split_parts(tiles, k // 64, sms, tile, True) > sms
    _route_computes_twice(G, route, m, n, k)


@pytest.mark.parametrize("route,shape", [
    ("splitk_swap_16x64_tail", (7, 11008, 4096)), ("splitk_swap_16x64_tail", (1, 28672, 4096)),
    ("splitk_swap_16x64_tail", (200, 14336, 4096)), ("splitk_64x64_tail", (7, 11008, 4096)),
    ("splitk_64x64_tail", (64, 28672, 1000)), ("splitk_64x128_tail", (200, 14336, 4096)),
    ("splitk_64x128_tail", (7, 22016, 4096))])
def test_tail_split_routes_compute(K, route, shape):
    """The tail routes where their tiles fill whole waves and the last wave's tiles are split
    (each CTA runs its whole tiles, then one part of a tail tile), twice."""
    from cakec.runtime import routes

    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = shape
    tile = G.table().split_tile(route)
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert tiles > sms and routes.tail_parts(tiles, -(-k // 64), sms, tile) > 1
    _route_computes_twice(G, route, m, n, k)


@pytest.mark.parametrize("route", ["torch", "persistent_128x256", "skinny_64x64",
                                   "splitk_64x64", "splitk_64x128", "splitk_swap_16x64",
                                   "splitk_128x128", "splitk_swap_16x64_waves",
                                   "splitk_swap_16x64_k256", "splitk_swap_16x64_pp",
                                   "splitk_64x64_pp", "splitk_swap_16x64_tail",
                                   "splitk_64x64_tail", "splitk_64x128_tail"])
def test_gemm_plan_patches_each_output(K, route):
    """A plan (what a repeated signature runs) writes every fresh output at its own address
    (the binding's C pointer patched per call), a given `out` of the same layout, and on
    another stream (its own binding and split-K scratch), with fresh inputs each time."""
    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = 48, 1000, 2056
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    run = G.plan(route, a, b)
    for _ in range(2):
        a.copy_(torch.randn_like(a))
        ref = a.float() @ b.float().t()
        outs = [run(a, b, None) for _ in range(3)]
        assert len({o.data_ptr() for o in outs}) == 3
        given = torch.full((m, n), float("nan"), **BF)
        assert run(a, b, given) is given
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            outs.append(run(a, b, None))
        torch.cuda.current_stream().wait_stream(side)
        for o in [*outs, given]:
            assert not o.isnan().any() and _rel(o, ref) < 5e-3, route


def test_gemm_plans_follow_the_signature_and_hold_no_tensor(K):
    """gemm() keeps one plan per signature: a repeat adds none; an `out` of another layout
    (a row-padded view) gets its own plan and is written in place; a plan keeps neither
    input alive (its binding holds pointers, not tensors)."""
    import gc
    import weakref

    G = importlib.import_module("cakec.kernels.gemm")
    m, n, k = 16, 4096, 4096
    a, b = torch.randn(m, k, **BF), torch.randn(n, k, **BF)
    ref = a.float() @ b.float().t()
    before = len(G._plans)
    first = K.gemm(a, b)
    assert len(G._plans) == before + 1
    again = K.gemm(a, b)
    assert len(G._plans) == before + 1 and first.data_ptr() != again.data_ptr()
    big = torch.full((m, n + 8), 7.0, **BF)
    padded = big[:, :n]
    assert K.gemm(a, b, out=padded) is padded and len(G._plans) == before + 2
    assert _rel(first, ref) < 5e-3 and _rel(again, ref) < 5e-3 and _rel(padded, ref) < 5e-3
    assert (big[:, n:] == 7.0).all()
    alive = weakref.ref(a)
    del a, first, again
    gc.collect()
    assert alive() is None


def test_gemm_follows_its_route_table(K, tmp_path, monkeypatch):
    """gemm() runs the route the table names, the torch route included, and checks its
    inputs on every route."""
    import json

    from cakec.runtime import routes

    G = importlib.import_module("cakec.kernels.gemm")

    raw = routes.load("gemm", routes.path("gemm")).to_json()
    raw["rules"] = [{"box": {"m": [0, 10]}, "route": "torch"},
                    {"box": {"m": [11, 20]}, "route": "skinny_64x32"},
                    {"box": {}, "route": "persistent_128x128"}]
    (tmp_path / "gemm_routes.json").write_text(json.dumps(raw))
    monkeypatch.setenv("CAKEC_ROUTES_DIR", str(tmp_path))
    saved = list(G._table)
    G._table.clear()
    G._plans.clear()  # plans made under the shipped table would skip the new routes
    try:
        assert [G.route_of(m, 64, 64) for m in (5, 15, 500)] == ["torch", "skinny_64x32",
                                                               "persistent_128x128"]
        for m in (5, 15, 500):
            a, b = torch.randn(m, 72, **BF), torch.randn(96, 72, **BF)
            assert _rel(K.gemm(a, b), a.float() @ b.float().t()) < 5e-3
            with pytest.raises(CakeArgumentError, match="b has dtype"):
                K.gemm(a, b.half())
            with pytest.raises(CakeArgumentError, match=r"out has shape \[1, 96\]"):
                K.gemm(a, b, out=torch.empty(1, 96, **BF))
    finally:
        G._table[:] = saved
        G._plans.clear()  # and these were made under the test's table


@pytest.mark.parametrize("kernel_name", ["kmeans_assign", "kmeans_assign_d64",
                                         "kmeans_assign_r128", "kmeans_assign_k32",
                                         "kmeans_assign_k32_d64", "kmeans_assign_k32_w4",
                                         "kmeans_assign_k32_d64_w4", "kmeans_assign_k32_d64_x2",
                                         "kmeans_assign_pp"])
def test_every_kmeans_route_by_distance(K, example, kernel_name):
    from cakec.kernels import build

    kernel = build.kernel(kernel_name, "sm_90a")
    for b, n, k, d in [(1, 1, 1, 8), (3, 1000, 300, 64), (2, 4096, 1111, 128), (2, 300, 130, 96),
                       (4, 3000, 16, 128), (2, 777, 33, 64), (5, 9000, 16, 64), (3, 2000, 7, 40)]:
        if "_d64" in kernel_name and d > 64:  # the D <= 64 kernels (`requires` in the route table)
            continue
        x, c = torch.randn(b, n, d, **BF), torch.randn(b, k, d, **BF)
        csq = K.csq_buffer(b, k, "cuda")
        csq.copy_((c.float() ** 2).sum(-1))
        idx = torch.full((b, n), -1, device="cuda", dtype=torch.int32)
        dist = torch.full((b, n), float("nan"), device="cuda")
        kernel(x, c, csq, idx, dist, b, n, k)
        assert example.check(x, c, idx, dist) == {"choice": 0, "dist": 0}, (kernel_name, b, n, k, d)


def test_kmeans_assign_plan_patches_each_output(K, example):
    """A repeated signature runs its plan: fresh idx/dist at new addresses each call, 2-D and
    3-D, with c_sq given or computed into the stream's scratch, on another stream too, with
    new data in the same inputs; the plan keeps neither input alive."""
    import gc
    import weakref

    for b, n, k, d, given in [(2, 3000, 16, 64, False), (2, 3000, 300, 128, True),
                              (None, 5000, 40, 96, False), (None, 700, 16, 64, True)]:
        shape_x, shape_c = ((n, d), (k, d)) if b is None else ((b, n, d), (b, k, d))
        x, c = torch.randn(*shape_x, **BF), torch.randn(*shape_c, **BF)
        csq = None
        if given:
            csq = K.csq_buffer(1 if b is None else b, k, "cuda")
            csq = csq[0] if b is None else csq
        for _ in range(2):
            x.copy_(torch.randn_like(x))
            c.copy_(torch.randn_like(c))
            if csq is not None:
                csq.copy_((c.float() ** 2).sum(-1))
            outs = [K.kmeans_assign(x, c, csq) for _ in range(2)]
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                outs.append(K.kmeans_assign(x, c, csq))
            torch.cuda.current_stream().wait_stream(side)
            torch.cuda.synchronize()
            assert len({o[0].data_ptr() for o in outs}) == 3
            x3, c3 = (x[None], c[None]) if b is None else (x, c)
            for idx, dist in outs:
                assert idx.shape == x.shape[:-1] and dist.shape == x.shape[:-1]
                got = (idx[None], dist[None]) if b is None else (idx, dist)
                assert example.check(x3, c3, *got) == {"choice": 0, "dist": 0}, (b, n, k, d)
    alive = weakref.ref(x)
    del x, x3, outs
    gc.collect()
    assert alive() is None


def test_kmeans_assign_checks_run_on_a_new_signature_only(K):
    """A repeated call skips the entry's checks (they depend on the signature alone); any
    change of pointer, shape or dtype runs them again, so bad input is still refused."""
    KM = importlib.import_module("cakec.kernels.kmeans")
    x, c = torch.randn(2, 100, 64, **BF), torch.randn(2, 10, 64, **BF)
    K.kmeans_assign(x, c)
    calls = []
    real = KM._check
    KM._check = lambda *a: (calls.append(a), real(*a))[1]
    try:
        K.kmeans_assign(x, c)
        assert calls == []
        with pytest.raises(CakeArgumentError, match="dimensions D of x and c disagree"):
            K.kmeans_assign(x, torch.randn(2, 10, 72, **BF))
        assert len(calls) == 1
    finally:
        KM._check = real
