"""k-means on the shipped assignment kernels: `kmeans_assign(x, c)` -> (idx, dist) as the
torch op `cake::kmeans_assign` (kmeans_csq.cake for ||c||², then the assignment variant the
route table cakec/kernels/kmeans_assign_routes.json picks: kmeans_assign.cake,
kmeans_assign_d64.cake for D <= 64, kmeans_assign_r128.cake for small problems), and
`kmeans(x, k, iters)`, Lloyd's loop with the centroid update on torch's index_add_."""

from __future__ import annotations

from typing import Any, Callable

import torch

from cakec.kernels import build, checks, ops
from cakec.runtime import plans, routes

_ENTRY = "cakec.kernels.kmeans_assign"
_compiling = torch.compiler.is_compiling
#: The widest D the assignment kernels' tiles cover.
MAX_D = 128
#: (B·N, K, D) -> the assignment kernel's name.
_names: dict[tuple[int, int, int], str] = {}
_table: list[routes.Table] = []


def table() -> routes.Table:
    """kmeans_assign's route table (the shipped one, or $CAKEC_ROUTES_DIR's), read once."""
    if not _table:
        _table.append(routes.load("kmeans_assign"))
    return _table[0]


def route_of(b: int, n: int, k: int, d: int) -> str:
    """The route the table picks for B batches of N points, K centroids, D dimensions."""
    return table().choose(rows=b * n, k=k, d=d)


def _kernel_name(b: int, n: int, k: int, d: int) -> str:
    key = (b * n, k, d)
    name = _names.get(key)
    if name is None:
        name = _names[key] = table().kernel(route_of(b, n, k, d))
    return name


def csq_buffer(b: int, k: int, device: torch.device | str) -> torch.Tensor:
    """Scratch for ||c||²: a [B, K] f32 view whose rows start a multiple of 16 bytes apart
    (the assignment kernels read it by TMA)."""
    return torch.empty(b, (k + 3) // 4 * 4, device=device, dtype=torch.float32)[:, :k]


def assign_into(x: torch.Tensor, c: torch.Tensor, csq: torch.Tensor, idx: torch.Tensor,
                dist: torch.Tensor, csq_ready: bool = False,
                check: Callable[[], None] | None = None) -> None:
    """One assignment on the current stream, 3-D operands: ||c||² into `csq` (skipped when
    `csq_ready`), then idx and dist. `check` (the entry's own checks) runs before either
    kernel binds a new argument signature."""
    b, n, d = x.shape
    k = c.shape[1]
    if n == 0 or b == 0:
        if check is not None:
            check()
        return
    target = checks.target(_ENTRY, x)
    if not csq_ready:
        build.kernel("kmeans_csq", target)(c, csq, b, k, check=check)
    build.kernel(_kernel_name(b, n, k, d), target)(x, c, csq, idx, dist, b, n, k, check=check)


def _outputs(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    b, n, _ = x.shape
    return (torch.empty((b, n), device=x.device, dtype=torch.int32),
            torch.empty((b, n), device=x.device, dtype=torch.float32))


#: ||c||² scratch per (B, K, device index, stream): reused by every call on that stream,
#: whose kernels run in stream order, so one call's ||c||² is read before the next call's
#: overwrites it. A fresh buffer per call cost an allocation and a slice (~10 µs of host
#: time on the H200's host) and a new kernel binding whenever its address changed.
_scratch: dict[tuple[int, int, int, int], torch.Tensor] = {}


def _csq_scratch(x: torch.Tensor, b: int, k: int) -> torch.Tensor:
    dev = x.get_device()
    key = (b, k, dev, torch._C._cuda_getCurrentRawStream(dev))
    buf = _scratch.get(key)
    if buf is None:
        buf = _scratch[key] = csq_buffer(b, k, x.device)
    return buf


def _key_one(x: Any, c: Any, c_sq: Any) -> tuple:
    """With one GPU: x's, c's (and c_sq's) pointers, shapes, strides and dtypes."""
    if c_sq is None:
        return (x.data_ptr(), x.shape, x.stride(), x.dtype, c.data_ptr(), c.shape, c.stride(),
                c.dtype)
    return (x.data_ptr(), x.shape, x.stride(), x.dtype, c.data_ptr(), c.shape, c.stride(),
            c.dtype, c_sq.data_ptr(), c_sq.shape, c_sq.stride(), c_sq.dtype)


def _key_many(x: Any, c: Any, c_sq: Any) -> tuple:
    """With several GPUs, the devices too."""
    return (x.get_device(), c.get_device(), c_sq is None or c_sq.get_device(),
            *_key_one(x, c, c_sq))


def _plan(x: torch.Tensor, c: torch.Tensor, c_sq: torch.Tensor | None
          ) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    """The plan of checked, non-empty arguments (2-D or 3-D). A 2-D call's outputs are
    allocated 1-D: their memory is the [1, N] rows the kernel is bound to."""
    batched = x.dim() == 3
    b, n, d = x.shape if batched else (1, *x.shape)
    k = c.shape[-2]
    target = checks.target(_ENTRY, x)
    assign = build.kernel(_kernel_name(b, n, k, d), target)
    csq_kernel = build.kernel("kmeans_csq", target) if c_sq is None else None
    dev, device, shape = x.get_device(), x.device, ((b, n) if batched else (n,))
    raw_stream, empty, i32, f32 = (torch._C._cuda_getCurrentRawStream, torch.empty,
                                   torch.int32, torch.float32)
    per_stream: dict[int, tuple[Any, Any, torch.Tensor]] = {}

    def prepare(x: torch.Tensor, c: torch.Tensor, c_sq: torch.Tensor | None,
                idx: torch.Tensor, dist: torch.Tensor, handle: int) -> tuple:
        x3, c3, idx3, dist3 = ((x, c, idx, dist) if batched
                               else (x[None], c[None], idx[None], dist[None]))
        if c_sq is None:
            csq = _csq_scratch(x3, b, k)
            first = csq_kernel.prepare((c3, csq, b, k))  # type: ignore[union-attr]
        else:
            csq, first = (c_sq if batched else c_sq[None]), None
        second = assign.prepare((x3, c3, csq, idx3, dist3, b, n, k), ("Idx", "Dist"))
        if len(per_stream) >= plans.STREAMS:
            per_stream.clear()
        # the scratch stays alive while a binding points into it
        got = per_stream[handle] = (first, second, csq if c_sq is None else None)
        return got

    def run(x: torch.Tensor, c: torch.Tensor, c_sq: torch.Tensor | None
            ) -> tuple[torch.Tensor, torch.Tensor]:
        # the extents as separate ints: 0.7 µs a call faster than one shape tuple (CPU torch)
        idx = empty(*shape, dtype=i32, device=device)
        dist = empty(*shape, dtype=f32, device=device)
        handle = raw_stream(dev)
        first, second, _ = per_stream.get(handle) or prepare(x, c, c_sq, idx, dist, handle)
        if first is not None:
            first(handle)
        second(handle, idx.data_ptr(), dist.data_ptr())
        return idx, dist
    return run


def _first(x: Any, c: Any, c_sq: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """A call whose signature has no plan: check everything; an empty problem gets empty
    outputs here, anything else a plan, kept and run."""
    _check(x, c, c_sq)
    if x.shape[-2] == 0 or x.dim() == 3 and x.shape[0] == 0:
        shape = x.shape[:-1]
        return (torch.empty(shape, device=x.device, dtype=torch.int32),
                torch.empty(shape, device=x.device, dtype=torch.float32))
    fn = _plan(x, c, c_sq)
    _plans.keep((x, c, c_sq), fn)
    return fn(x, c, c_sq)


#: `_run(x, c, c_sq)` -> (idx, dist) through the plan of this signature: a repeat is one key,
#: one lookup, the two outputs' allocation and the launches with their pointers patched in
#: (Kernel.prepare).
_plans: plans.Plans[tuple[torch.Tensor, torch.Tensor]] = plans.Plans(
    _first, _key_one, _key_many, lambda: torch.cuda.device_count() > 1)
_run = _plans.run


def _assign_impl(x: torch.Tensor, c: torch.Tensor,
                 c_sq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """cake::kmeans_assign's kernel (3-D operands; the checks run on a new signature)."""
    return _run(x, c, c_sq)


def _assign_fake(x: torch.Tensor, c: torch.Tensor,
                 c_sq: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    b, n, _ = x.shape
    return x.new_empty((b, n), dtype=torch.int32), x.new_empty((b, n), dtype=torch.float32)


ops.define("kmeans_assign(Tensor x, Tensor c, Tensor? c_sq) -> (Tensor, Tensor)",
           _assign_impl, _assign_fake)


def _check(x: Any, c: Any, c_sq: Any) -> None:
    """Every input rule of kmeans_assign (x and c of one rank, 2 or 3)."""
    checks.tensor(_ENTRY, "x", x, dtype=torch.bfloat16, ranks=(2, 3), tma=True)
    checks.tensor(_ENTRY, "c", c, dtype=torch.bfloat16, ranks=(x.dim(),), device=x.device,
                  tma=True)
    if x.dim() == 3:
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


def kmeans_assign(x: torch.Tensor, c: torch.Tensor,
                  c_sq: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Nearest centroid per point: x [B, N, D] (or [N, D]) and c [B, K, D] (or [K, D]) bf16,
    D <= 128 and D % 8 == 0, K >= 1 -> idx [B, N] int32 (lowest index on ties) and dist
    [B, N] f32, the squared distance to it. `c_sq` ([B, K] or [K] f32, rows 16-byte aligned,
    e.g. from `csq_buffer`) gives ||c||² when the centroids are reused across calls.

    The checks (`_check`) run in full on a call whose argument signature (pointers, shapes,
    strides, dtypes) the kernels have not bound before, and are skipped on a repeat, like
    the runtime's own: they depend on nothing else."""
    if not _compiling():
        return _run(x, c, c_sq)
    _check(x, c, c_sq)
    batched = x.dim() == 3
    x3, c3 = (x, c) if batched else (x[None], c[None])
    csq3 = None if c_sq is None or batched else c_sq[None]
    idx, dist = torch.ops.cake.kmeans_assign(x3, c3, csq3)
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
    if isinstance(iters, bool) or not isinstance(iters, int) or iters < 0:
        raise checks.CakeArgumentError(f"cakec.kernels.kmeans: iters = {iters!r}; expected an "
                                       "int >= 0")
    batched = x.dim() == 3
    x3 = x if batched else x[None]
    b, n, d = x3.shape
    if isinstance(init, torch.Tensor):
        if init.device != x.device or not init.is_floating_point():
            raise checks.CakeArgumentError(f"cakec.kernels.kmeans: init is {init.dtype} on "
                                           f"{init.device}; expected floating point on {x.device}")
        c = (init if batched else init[None]).float()
        if tuple(c.shape) != (b, k, d):
            want = [b, k, d][not batched:]
            raise checks.CakeArgumentError(f"cakec.kernels.kmeans: init has shape "
                                           f"{list(init.shape)}; expected {want}")
    elif init == "random":
        if not 1 <= k <= n:
            raise checks.CakeArgumentError(f"cakec.kernels.kmeans: k = {k} needs 1 <= k <= N = {n}")
        pick = torch.stack([torch.randperm(n, generator=generator, device="cpu")[:k]
                            for _ in range(b)]).to(x.device)
        c = torch.gather(x3, 1, pick[:, :, None].expand(b, k, d)).float()
    else:
        raise checks.CakeArgumentError(f"cakec.kernels.kmeans: init {init!r} is neither "
                                       "'random' nor a tensor")
    # One set of buffers for every round: each assignment replays the kernels' bindings
    # (same pointers, shapes, strides), so the loop's host cost is the launches alone.
    cb = torch.empty((b, k, d), device=x.device, dtype=torch.bfloat16)
    csq = csq_buffer(b, k, x.device)
    idx, dist = _outputs(x3)
    check = lambda: _check(x3, cb, None)  # noqa: E731 - run on a new signature only
    points = x3.reshape(b * n, d).float()
    offsets = (torch.arange(b, device=x.device, dtype=torch.int64) * k)[:, None]
    ones = torch.ones(b * n, device=x.device, dtype=torch.float32)
    sums = torch.empty((b * k, d), device=x.device, dtype=torch.float32)
    counts = torch.empty(b * k, device=x.device, dtype=torch.float32)
    for _ in range(iters):
        cb.copy_(c)
        assign_into(x3, cb, csq, idx, dist, check=check)
        flat = (idx.long() + offsets).reshape(-1)
        sums.zero_().index_add_(0, flat, points)
        counts.zero_().index_add_(0, flat, ones)
        mean = (sums / counts.clamp(min=1)[:, None]).reshape(b, k, d)
        c = torch.where((counts > 0).reshape(b, k, 1), mean, c)
    cb.copy_(c)
    assign_into(x3, cb, csq, idx, dist, check=check)
    return (c, idx, dist) if batched else (c[0], idx[0], dist[0])
