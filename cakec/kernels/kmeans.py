"""k-means on the shipped assignment kernels: `kmeans_assign(x, c)` -> (idx, dist) as the
torch op `cake::kmeans_assign` (kmeans_csq.cake for ||c||², then kmeans_assign.cake, or
kmeans_assign_d64.cake for D <= 64), and `kmeans(x, k, iters)`, Lloyd's loop with the
centroid update on torch's index_add_."""

from __future__ import annotations

import torch

from cakec.kernels import build, checks

_ENTRY = "cakec.kernels.kmeans_assign"
#: The widest D the assignment kernels' tiles cover, and the narrow route's.
MAX_D, NARROW_D = 128, 64


def csq_buffer(b: int, k: int, device: torch.device | str) -> torch.Tensor:
    """Scratch for ||c||²: a [B, K] f32 view whose rows start a multiple of 16 bytes apart
    (the assignment kernels read it by TMA)."""
    return torch.empty(b, (k + 3) // 4 * 4, device=device, dtype=torch.float32)[:, :k]


def assign_into(x: torch.Tensor, c: torch.Tensor, csq: torch.Tensor, idx: torch.Tensor,
                dist: torch.Tensor, csq_ready: bool = False) -> None:
    """One assignment on the current stream, 3-D operands: ||c||² into `csq` (skipped when
    `csq_ready`), then idx and dist."""
    b, n, d = x.shape
    k = c.shape[1]
    if n == 0:
        return
    target = checks.target(_ENTRY, x)
    if not csq_ready:
        build.kernel("kmeans_csq", target)(c, csq, b, k)
    name = "kmeans_assign_d64" if d <= NARROW_D else "kmeans_assign"
    build.kernel(name, target)(x, c, csq, idx, dist, b, n, k)


def _outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    b, n, _ = x.shape
    return (torch.empty((b, n), device=x.device, dtype=torch.int32),
            torch.empty((b, n), device=x.device, dtype=torch.float32))


def _assign_direct(x: torch.Tensor, c: torch.Tensor,
                   c_sq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    idx, dist = _outputs(x)
    csq = c_sq if c_sq is not None else csq_buffer(x.shape[0], c.shape[1], x.device)
    assign_into(x, c, csq, idx, dist, csq_ready=c_sq is not None)
    return idx, dist


@torch.library.custom_op("cake::kmeans_assign", mutates_args=())
def _assign(x: torch.Tensor, c: torch.Tensor,
            c_sq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    return _assign_direct(x, c, c_sq)


@_assign.register_fake
def _(x: torch.Tensor, c: torch.Tensor,
      c_sq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    b, n, _ = x.shape
    return x.new_empty((b, n), dtype=torch.int32), x.new_empty((b, n), dtype=torch.float32)


def kmeans_assign(x: torch.Tensor, c: torch.Tensor,
                  c_sq: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest centroid per point: x [B, N, D] (or [N, D]) and c [B, K, D] (or [K, D]) bf16,
    D <= 128 and D % 8 == 0, K >= 1 -> idx [B, N] int32 (lowest index on ties) and dist
    [B, N] f32, the squared distance to it. `c_sq` ([B, K] or [K] f32, rows 16-byte aligned,
    e.g. from `csq_buffer`) gives ||c||² when the centroids are reused across calls."""
    checks.tensor(_ENTRY, "x", x, dtype=torch.bfloat16, ranks=(2, 3), tma=True)
    checks.tensor(_ENTRY, "c", c, dtype=torch.bfloat16, ranks=(x.dim(),), device=x.device,
                  tma=True)
    batched = x.dim() == 3
    if batched:
        checks.same(_ENTRY, "batch sizes of x and c", x.shape[0], c.shape[0])
    checks.same(_ENTRY, "dimensions D of x and c", x.shape[-1], c.shape[-1])
    d, k = x.shape[-1], c.shape[-2]
    if not (1 <= d <= MAX_D and d % 8 == 0):
        raise checks.CakeArgumentError(f"{_ENTRY}: D = {d}; the kernels take 8 <= D <= {MAX_D} "
                                       "with D % 8 == 0")
    if k < 1:
        raise checks.CakeArgumentError(f"{_ENTRY}: c has no centroids (K = 0)")
    if c_sq is not None:
        checks.tensor(_ENTRY, "c_sq", c_sq, dtype=torch.float32, ranks=(x.dim() - 1,),
                      device=x.device, tma=True)
        if tuple(c_sq.shape) != tuple(c.shape[:-1]):
            raise checks.CakeArgumentError(f"{_ENTRY}: c_sq has shape {list(c_sq.shape)}; "
                                           f"expected {list(c.shape[:-1])}")
    x3, c3 = (x, c) if batched else (x[None], c[None])
    csq3 = None if c_sq is None or batched else c_sq[None]
    if torch.compiler.is_compiling():
        idx, dist = torch.ops.cake.kmeans_assign(x3, c3, csq3)
    else:
        idx, dist = _assign_direct(x3, c3, csq3)
    return (idx, dist) if batched else (idx[0], dist[0])


def kmeans(x: torch.Tensor, k: int, iters: int = 10, init: str | torch.Tensor = "random",
           generator: torch.Generator | None = None
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Lloyd's k-means on x [B, N, D] (or [N, D]) bf16: `iters` rounds of assignment (our
    kernel) and centroid update (the f32 mean of each cluster's points, torch's index_add_;
    a cluster left empty keeps its centroid). `init`: "random" (k distinct points per batch,
    drawn with `generator`) or the starting centroids [B, k, D] (or [k, D]). Returns
    (centroids f32, idx int32, dist f32) of a final assignment to the returned centroids."""
    checks.tensor("cakec.kernels.kmeans", "x", x, dtype=torch.bfloat16, ranks=(2, 3))
    batched = x.dim() == 3
    x3 = x if batched else x[None]
    b, n, d = x3.shape
    if isinstance(init, torch.Tensor):
        c = (init if batched else init[None]).float()
        if tuple(c.shape) != (b, k, d):
            raise checks.CakeArgumentError(f"cakec.kernels.kmeans: init has shape "
                                           f"{list(init.shape)}; expected {[b, k, d][not batched:]}")
    elif init == "random":
        if not 1 <= k <= n:
            raise checks.CakeArgumentError(f"cakec.kernels.kmeans: k = {k} needs 1 <= k <= N = {n}")
        pick = torch.stack([torch.randperm(n, generator=generator, device="cpu")[:k]
                            for _ in range(b)]).to(x.device)
        c = torch.gather(x3, 1, pick[:, :, None].expand(b, k, d)).float()
    else:
        raise checks.CakeArgumentError(f"cakec.kernels.kmeans: init {init!r} is neither "
                                       "'random' nor a tensor")
    points = x3.reshape(b * n, d).float()
    offsets = (torch.arange(b, device=x.device, dtype=torch.int64) * k)[:, None]
    ones = torch.ones(b * n, device=x.device, dtype=torch.float32)
    for _ in range(iters):
        idx, _ = kmeans_assign(x3, c.to(torch.bfloat16))
        flat = (idx.long() + offsets).reshape(-1)
        sums = torch.zeros(b * k, d, device=x.device).index_add_(0, flat, points)
        counts = torch.zeros(b * k, device=x.device).index_add_(0, flat, ones)
        mean = (sums / counts.clamp(min=1)[:, None]).reshape(b, k, d)
        c = torch.where((counts > 0).reshape(b, k, 1), mean, c)
    idx, dist = kmeans_assign(x3, c.to(torch.bfloat16))
    return (c, idx, dist) if batched else (c[0], idx[0], dist[0])
