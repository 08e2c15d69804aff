"""Other forms of the k-means assignment kernel on an sm_90 GPU, against the shipped
kmeans_assign kernel: examples/kmeans_assign_mc.cake (2-CTA clusters sharing each centroid tile
by TMA multicast) and cakec/kernels/kmeans_assign_pp.cake (the two math warpgroups as ping-pong
roles, each with its own 128 rows), on fresh random inputs at ragged shapes: an odd number of
256-row blocks (the last cluster's rank-1 CTA has no rows and must still take and release the
shared tiles), 128-row halves past N (the ping-pong kernel's second role), one row, K and D off
the tiles, more items than clusters or CTAs. Each result is checked by distance against a
float64 reference (examples/kmeans_assign.py `check`), with guard cells around the outputs,
and must equal the shipped kernel's bit for bit (the same tiles, MMAs and merge order per
row). Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_kmeans_variants_gpu.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402
from kmeans_guards import assert_written_inside, guarded_outputs  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

ROOT = Path(__file__).resolve().parents[2]

#: The variants by name: their sources.
VARIANTS = {"multicast": ROOT / "examples" / "kmeans_assign_mc.cake",
            "pingpong": ROOT / "cakec" / "kernels" / "kmeans_assign_pp.cake"}

# B, N, K, D (D % 8 == 0 and D <= 128); 256-row blocks per batch in the comments.
SHAPES = [
    (1, 1, 1, 8),            # 1 block: the pair's second CTA has no rows at all
    (2, 300, 40, 128),       # 2 blocks, the last one's second 128-row half past N
    (1, 256, 128, 128),      # 1 block, exactly one tile each way
    (3, 1000, 300, 72),      # 4 blocks, every extent ragged
    (2, 300, 257, 64),       # 2 blocks, K one past two tiles
    (5, 777, 1024, 128),     # 4 blocks (the last ragged), odd batch count
    (3, 20000, 300, 72),     # 79 blocks (odd): more pairs than clusters, X refills
    (2, 40000, 130, 64),     # 157 blocks (odd)
    (32, 4096, 1024, 128),   # the bench shape's K and D, 16 blocks a batch
]


@pytest.fixture(scope="module")
def shipped():
    from cakec.api import load_example
    from cakec.kernels import build

    example = load_example(ROOT / "examples" / "kmeans_assign.cake")
    return example, build.kernel("kmeans_assign", "sm_90a"), build.kernel("kmeans_csq", "sm_90a")


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def variant(request):
    import cakec

    return cakec.compile(VARIANTS[request.param], target="sm_90a")



@pytest.mark.parametrize("b,n,k,d", SHAPES, ids=lambda v: str(v))
def test_variant_assign(shipped, variant, b, n, k, d):
    example, kernel, csq_kernel = shipped
    gen = torch.Generator(device="cuda").manual_seed(b * 7919 + n * 31 + k * 7 + d + 1)
    x = torch.randn(b, n, d, device="cuda", generator=gen).to(torch.bfloat16)
    c = torch.randn(b, k, d, device="cuda", generator=gen).to(torch.bfloat16)
    csq = example.csq_buffer(b, k)
    csq_kernel(c, csq, b, k)
    ibuf, dbuf, idx, dist = guarded_outputs(torch, b, n)
    variant(x, c, csq, idx, dist, b, n, k)
    _, _, idx_ref, dist_ref = guarded_outputs(torch, b, n)
    kernel(x, c, csq, idx_ref, dist_ref, b, n, k)
    torch.cuda.synchronize()
    assert_written_inside(torch, ibuf, dbuf, b, n)
    assert example.check(x, c, idx, dist) == {"choice": 0, "dist": 0}
    assert torch.equal(idx, idx_ref) and torch.equal(dist, dist_ref), \
        "the variant differs from the shipped kernel"


def test_multicast_grid_is_one_wave():
    """The multicast kernel launches sm_count // 2 clusters of 2 (`lm.sm_count() // 2` in its
    grid): the device must hold that many clusters at once (cuOccupancyMaxActiveClusters),
    else the last ones would run as a second wave."""
    import cakec

    multicast = cakec.compile(VARIANTS["multicast"], target="sm_90a")
    assert tuple(multicast.meta.cluster) == (2, 1, 1)
    facts = multicast.device_facts()
    assert facts["max_clusters"] >= facts["sm_count"] // 2, facts
