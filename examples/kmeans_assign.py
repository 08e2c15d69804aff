"""Inputs, reference and baselines for examples/kmeans_assign.cake (`cakec run` reads these),
and `assign`, the whole call (||c||² kernel + assignment kernel) that bench/ and the GPU
tests time and check.

idx[b, i] = argmin_j ||X[b, i] - C[b, j]||², dist[b, i] = that squared distance, X [B, N, D]
and C [B, K, D] bf16 with D ≤ 128 and D % 8 == 0 (the library's route table,
cakec/kernels/kmeans_assign_routes.json, picks this kernel, kmeans_assign_d64.cake for D ≤ 64
or kmeans_assign_r128.cake for small problems).
Arguments of the assignment kernels, in their parameter order: X, C, Csq, Idx, Dist, B, N, K.

Correctness is judged by distance, not index (bf16 near-ties flip ~0.7% of indices): for
every row the chosen centroid's float64 distance must be within 1e-3 relative (1e-2
absolute floor) of the true minimum, and `dist` must match that centroid's distance.

Under `cakec run` the ||c||² kernel runs in `make_inputs`, outside the timing; bench/
kmeans_assign.py times `assign`, both launches.
"""

from __future__ import annotations

#: Problem sizes; the first is `cakec run`'s default (`--shape B=..,N=..,K=..,D=..`).
shapes = [
    {"B": 32, "N": 65536, "K": 1024, "D": 128},
    {"B": 1, "N": 1 << 20, "K": 4096, "D": 128},
    {"B": 8, "N": 65536, "K": 256, "D": 64},
    {"B": 3, "N": 1000, "K": 300, "D": 72},  # ragged: N and K not multiples of the tiles
]

#: The parameter `cakec run` poisons with NaN and compares (Idx is int32, which NaN cannot
#: poison; `reference` judges it through the distance check).
outputs = ["Dist"]

#: `reference` returns the kernel's own dist when every row passes the distance check, so
#: any error is a failed row (see `reference`).
tolerance = 1e-6

REL, ABS = 1e-3, 1e-2
#: Rows of X compared against all centroids at once in float64 (bounds the N×K scratch).
_CHUNK = 1 << 13

def kernels() -> tuple:
    """(||c||² kernel, assignment kernel for D <= 128, the one for D <= 64): the library's
    (cakec.kernels), built once per process."""
    from cakec.kernels import build

    return tuple(build.kernel(name, "sm_90a")
                 for name in ("kmeans_csq", "kmeans_assign", "kmeans_assign_d64"))


def csq_buffer(b: int, k: int, device: str = "cuda"):
    from cakec.kernels.kmeans import csq_buffer as make

    return make(b, k, device)


def assign(x, c, csq, idx, dist, csq_ready: bool = False) -> None:
    """One assignment call on the current stream (cakec.kernels.kmeans.assign_into): ||c||²
    into `csq` (from `csq_buffer`; skipped when `csq_ready`), then idx and dist by the
    assignment kernel the route table picks for the shape (docs/kernels.md)."""
    from cakec.kernels.kmeans import assign_into

    assign_into(x, c, csq, idx, dist, csq_ready)


def make_inputs(shape: dict[str, int], device: str) -> tuple:
    import torch

    b, n, k, d = shape["B"], shape["N"], shape["K"], shape["D"]
    x = torch.randn(b, n, d, device=device).to(torch.bfloat16)
    c = torch.randn(b, k, d, device=device).to(torch.bfloat16)
    csq = csq_buffer(b, k, device)
    kernels()[0](c, csq, b, k)
    idx = torch.empty(b, n, device=device, dtype=torch.int32)
    dist = torch.empty(b, n, device=device, dtype=torch.float32)
    return x, c, csq, idx, dist, b, n, k


def check(x, c, idx, dist) -> dict[str, int]:
    """Rows failing the distance criteria (float64): `choice` (the chosen centroid is not
    within REL / ABS of the true minimum, or idx is out of range) and `dist` (dist is not
    that centroid's distance, or NaN: never written)."""
    import torch

    bad_choice = bad_dist = 0
    k = c.shape[1]
    for b in range(x.shape[0]):
        cd = c[b].double()
        csq = (cd * cd).sum(1)
        for r0 in range(0, x.shape[1], _CHUNK):
            xd = x[b, r0:r0 + _CHUNK].double()
            d = (xd * xd).sum(1, keepdim=True) + csq[None, :] - 2.0 * (xd @ cd.t())
            best = d.min(1).values
            i = idx[b, r0:r0 + _CHUNK].long()
            in_range = (i >= 0) & (i < k)
            chosen = d.gather(1, i.clamp(0, k - 1)[:, None])[:, 0]
            tol = torch.clamp(REL * best.abs(), min=ABS)
            bad_choice += int((~in_range | (chosen - best > tol)).sum())
            got = dist[b, r0:r0 + _CHUNK].double()
            dtol = torch.clamp(REL * chosen.abs(), min=ABS)
            bad_dist += int((~((got - chosen).abs() <= dtol)).sum())
    return {"choice": bad_choice, "dist": bad_dist}


def reference(inputs: tuple):
    """The kernel's dist when every row passes `check` (idx and dist); otherwise NaN, so
    `cakec run` reports the failure (an index comparison would flag bf16 near-ties)."""
    import torch

    x, c, _, idx, dist = inputs[:5]
    bad = check(x, c, idx, dist)
    if bad["choice"] or bad["dist"]:
        return torch.full_like(dist, float("nan"), dtype=torch.float64)
    return dist.double()


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["B"] * shape["N"] * shape["K"] * shape["D"]


def torch_naive(x, c):
    """bmm → distances → min/argmin (materialises the B×N×K distance matrix)."""
    import torch

    xf, cf = x.float(), c.float()
    d = ((xf * xf).sum(-1, keepdim=True) + (cf * cf).sum(-1)[:, None, :]
         - 2.0 * torch.bmm(x, c.transpose(1, 2)).float())
    return d.min(-1)


def _naive(inputs: tuple) -> None:
    torch_naive(inputs[0], inputs[1])


#: Same-process contenders (bench/kmeans_assign.py adds the Flash-KMeans Triton kernel).
baselines = {"torch naive": _naive}
