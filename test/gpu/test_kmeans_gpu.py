"""examples/kmeans_assign.cake (+ kmeans_csq.cake) on an sm_90a GPU: correct by distance at
ragged shapes (N and K not multiples of the 128-row tiles, D below the 128-wide tile, one
centroid, one row, batches whose boxes would cross into the next batch in a flattened view),
every output written and nothing outside the outputs touched, exact ties resolved to the
lowest index, and ||c||² itself. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_kmeans_gpu.py
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402
from kmeans_guards import assert_written_inside, guarded_outputs  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

ROOT = Path(__file__).resolve().parents[2]

# B, N, K, D (D % 8 == 0 and D <= 128).
SHAPES = [
    (1, 1, 1, 8),            # one row, one centroid
    (1, 128, 128, 128),      # exactly one tile each way
    (3, 1000, 300, 72),      # every extent ragged, D between the two column blocks
    (2, 129, 257, 64),       # one past the tile on N and K, D = one swizzle atom
    (4, 77, 5, 16),          # K below one fragment column octet
    (2, 4096, 1111, 128),    # many centroid tiles: laps of the 4-stage ring, K tail
    (5, 300, 1024, 128),     # K a multiple of the tile, N ragged, odd batch count
    (1, 20000, 2048, 128),   # many row blocks
    # More 256-row items than SMs: CTAs of the persistent kernels take several (X refills).
    (3, 20000, 300, 72),
    (2, 40000, 130, 64),
]


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("kmeans_assign_example",
                                                  ROOT / "examples" / "kmeans_assign.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.kernels()
    return module



@pytest.mark.parametrize("b,n,k,d", SHAPES, ids=lambda v: str(v))
def test_assign_by_distance(example, b, n, k, d):
    gen = torch.Generator(device="cuda").manual_seed(b * 7919 + n * 31 + k * 7 + d)
    x = torch.randn(b, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.randn(b, k, d, device="cuda", generator=gen).to(torch.bfloat16)
    csq = example.csq_buffer(b, k).fill_(float("nan"))
    ibuf, dbuf, idx, dist = guarded_outputs(torch, b, n)
    example.assign(x, c, csq, idx, dist)
    torch.cuda.synchronize()
    ref_csq = c.double().pow(2).sum(-1)
    assert torch.allclose(csq.double(), ref_csq, rtol=1e-5, atol=1e-4), "||c||² is wrong"
    assert_written_inside(torch, ibuf, dbuf, b, n)
    bad = example.check(x, c, idx, dist)
    assert bad == {"choice": 0, "dist": 0}, f"rows failing the distance check: {bad}"


def test_ties_go_to_the_lowest_index(example):
    """Every centroid repeated 3 times (copies in different tiles and lanes): the exact
    argmin must be the first copy."""
    b, n, k0, d = 2, 700, 100, 128
    gen = torch.Generator(device="cuda").manual_seed(11)
    x = torch.randn(b, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    base = torch.randn(b, k0, d, device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.cat([base, base, base], dim=1).contiguous()  # copy j at j, j + 100, j + 200
    csq = example.csq_buffer(b, 3 * k0)
    _, _, idx, dist = guarded_outputs(torch, b, n)
    example.assign(x, c, csq, idx, dist)
    torch.cuda.synchronize()
    assert int(idx.max()) < k0, "a tie went to a later copy of the same centroid"
    assert example.check(x, c, idx, dist) == {"choice": 0, "dist": 0}


def test_rows_never_mix_batches(example):
    """Batch 1's centroids far from batch 0's points: a box crossing batches would pick them."""
    b, n, k, d = 2, 200, 130, 128
    x = torch.zeros(b, n, d, device="cuda", dtype=torch.bfloat16)
    c = torch.full((b, k, d), 8.0, device="cuda", dtype=torch.bfloat16)
    c[1] = 0.0  # batch 1's centroids sit on batch 0's points
    csq = example.csq_buffer(b, k)
    _, _, idx, dist = guarded_outputs(torch, b, n)
    example.assign(x, c, csq, idx, dist)
    torch.cuda.synchronize()
    assert torch.equal(dist[0], torch.full_like(dist[0], 64.0 * d)), "batch 0 saw batch 1"
    assert int(idx[0].max()) == 0 and int(idx[1].max()) == 0, "ties must go to index 0"
