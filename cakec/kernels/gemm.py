"""`gemm(a, b)`: C = a · bᵀ in bf16 with f32 accumulation, as the torch op `cake::gemm` (and
`cake::gemm_out` writing into a given tensor), dispatched by shape over the variants in
cakec/kernels/gemm_routes.json (docs/kernels.md): the persistent 128×256 tile
(gemm_bf16.cake), a 128×128 one, the skinny decode tiles (gemm_bf16_skinny*.cake), the
split-K kernels (gemm_bf16_splitk*.cake) and torch.matmul where the table says no Cake
route wins."""

from __future__ import annotations

from typing import Any, Callable

import torch

from cakec.kernels import build, checks, ops
from cakec.runtime import plans, routes
from cakec.runtime.tuning import gemm_extents as extents

_ENTRY = "cakec.kernels.gemm"
_compiling = torch.compiler.is_compiling
_table: list[routes.Table] = []   # the route table, read on first use


def table() -> routes.Table:
    """gemm's route table (the shipped one, or $CAKEC_ROUTES_DIR's), read once."""
    if not _table:
        _table.append(routes.load("gemm"))
    return _table[0]


def route_of(m: int, n: int, k: int) -> str:
    """The route the table picks for an M×N×K product."""
    return table().choose(**extents(m, n, k))


#: A plan: the steady-state call `run(a, b, out)` of one argument signature (cakec/runtime/plans.py).
Plan = Callable[[torch.Tensor, torch.Tensor, "torch.Tensor | None"], torch.Tensor]


def _key_one(a: Any, b: Any, out: Any) -> tuple:
    """What identifies a plan with one GPU: a's and b's pointers, shapes, strides and dtypes,
    and `out`'s shape, strides, dtype and device (its pointer is patched per call)."""
    if out is None:
        return (a.data_ptr(), a.shape, a.stride(), a.dtype, b.data_ptr(), b.shape, b.stride(),
                b.dtype)
    return (a.data_ptr(), a.shape, a.stride(), a.dtype, b.data_ptr(), b.shape, b.stride(),
            b.dtype, out.shape, out.stride(), out.dtype, out.get_device())


def _key_many(a: Any, b: Any, out: Any) -> tuple:
    """With several GPUs, the devices of a and b too."""
    return (a.get_device(), b.get_device(), *_key_one(a, b, out))


def _torch_run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """The torch route's plan: torch.matmul, called as a user would (no `out=` unless given)."""
    if out is None:
        return torch.matmul(a, b.t())
    torch.matmul(a, b.t(), out=out)
    return out


#: Split-K scratch per (device, stream, S, M, N, tiles): the workspace W [S, M, N] f32 and
#: the per-tile counters L (zeroed once; every launch leaves them zero, docs/language.md
#: "Split-K"); routes of other tile sizes need other counts of counters. Per stream, since
#: kernels of one stream run in order: two launches never share them at once. The oldest
#: entry is dropped beyond _SPLIT_CACHE.
_split: dict[tuple[int, ...], tuple[torch.Tensor, torch.Tensor]] = {}
_SPLIT_CACHE = 64
_sms: dict[int, int] = {}


def _split_scratch(a: torch.Tensor, handle: int, s: int, m: int, n: int, tiles: int
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    key = (a.get_device(), handle, s, m, n, tiles)
    got = _split.get(key)
    if got is None:
        if len(_split) >= _SPLIT_CACHE:
            del _split[next(iter(_split))]
        got = _split[key] = (torch.empty((s, m, n), device=a.device, dtype=torch.float32),
                             torch.zeros(tiles, device=a.device, dtype=torch.int32))
    return got


def _route_args(tab: routes.Table, route: str, a: torch.Tensor, m: int, n: int, k: int
                ) -> tuple[Any, Callable[[torch.Tensor, torch.Tensor, torch.Tensor, int], tuple]]:
    """The Cake kernel of `route` and `args(a, b, c, stream_handle)`, its argument list for
    this M, N, K: a split-K route's also holds its K parts (split_parts, or tail_parts for a
    tail-split route, for this shape on a's GPU) and the scratch of that stream."""
    kern = build.kernel(tab.kernel(route), checks.target(_ENTRY, a))  # type: ignore[arg-type]
    tile = tab.split_tile(route)
    if tile is None:
        return kern, lambda a, b, c, handle: (a, b, c, m, n, k)
    dev = a.get_device()
    if dev not in _sms:
        _sms[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    k_tiles = -(-k // 64)
    s = (routes.tail_parts(tiles, k_tiles, _sms[dev], tile) if tab.split_tail(route)
         else routes.split_parts(tiles, k_tiles, _sms[dev], tile, tab.split_waves(route)))
    return kern, lambda a, b, c, handle: (a, b, c, *_split_scratch(a, handle, s, m, n, tiles),
                                          m, n, k, s)


def launcher(tab: routes.Table, route: str, a: torch.Tensor, m: int, n: int, k: int
             ) -> Callable[..., None]:
    """The Cake kernel of `route` as `run(a, b, c, m, n, k, check=None)` for this M, N, K,
    through the kernel's own binding cache (the route tests' entry point)."""
    kern, args = _route_args(tab, route, a, m, n, k)

    def run(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: int, n: int, k: int,
            check: Callable[[], None] | None = None) -> None:
        kern(*args(a, b, c, torch._C._cuda_getCurrentRawStream(a.get_device())), check=check)
    return run


def _cake_plan(tab: routes.Table, route: str, a: torch.Tensor, b: torch.Tensor,
               out: torch.Tensor | None, m: int, n: int, k: int) -> Plan:
    """A Cake route as a plan for a's and b's signature (and out's, when given): per stream,
    one private binding of the kernel with C open (Kernel.prepare), so a call allocates its
    output when none is given and launches with that pointer patched in, without building
    the kernel's signature again. The plan keeps no tensor of the call alive."""
    kern, args = _route_args(tab, route, a, m, n, k)
    dev = a.get_device()
    raw_stream = torch._C._cuda_getCurrentRawStream
    per_stream: dict[int, Callable[[int, int], None]] = {}
    held: dict[int, tuple] = {}   # per stream: the split scratch its binding points into

    def prepare(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, handle: int
                ) -> Callable[[int, int], None]:
        if len(per_stream) >= plans.STREAMS:
            per_stream.clear()
            held.clear()
        full = args(a, b, c, handle)
        go = per_stream[handle] = kern.prepare(full, ("C",))
        held[handle] = full[3:]  # alive while bound, even once _split lets them go
        return go

    def run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
        if out is None:
            out = a.new_empty(m, n)  # 0.4-0.7 µs a call faster than a shape tuple (CPU torch)
        handle = raw_stream(dev)
        go = per_stream.get(handle) or prepare(a, b, out, handle)
        go(handle, out.data_ptr())
        return out
    return run


def plan(route: str, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None,
         tab: routes.Table | None = None) -> Plan:
    """The plan of `route` (of `tab`, default gemm's table) for these arguments, checked
    first, as gemm() runs it: what `cakec tune` times, so a route is chosen on the cost the
    dispatcher pays. Call it as `run(a, b, out)` with tensors of this signature (any `out`
    of [M, N] with out's strides, or None)."""
    _check(a, b, out)
    (m, k), n = a.shape, b.shape[0]
    tab = tab or table()
    if tab.kernel(route) is None:
        return _torch_run
    return _cake_plan(tab, route, a, b, out, m, n, k)


def _first(a: Any, b: Any, out: Any) -> torch.Tensor:
    """A call whose signature has no plan: check everything, compute degenerate products
    (an empty extent) here, else make the plan of the table's route, keep it, run it."""
    _check(a, b, out)
    (m, k), n = a.shape, b.shape[0]
    if not (m and n and k):
        if out is None:
            out = a.new_empty((m, n))
        if m and n:
            out.zero_()  # K = 0: the empty sum
        return out
    fn = plan(route_of(m, n, k), a, b, out)
    _plans.keep((a, b, out), fn)
    return fn(a, b, out)


#: a · bᵀ (into `out` when given) through the plan of this signature: `_run(a, b, out)`.
_plans: plans.Plans[torch.Tensor] = plans.Plans(_first, _key_one, _key_many,
                                                lambda: torch.cuda.device_count() > 1)
_run = _plans.run


def _check(a: Any, b: Any, out: Any) -> None:
    checks.tensor(_ENTRY, "a", a, dtype=torch.bfloat16, ranks=(2,), tma=True)
    checks.tensor(_ENTRY, "b", b, dtype=torch.bfloat16, ranks=(2,), device=a.device, tma=True)
    checks.same(_ENTRY, "a.shape[1] and b.shape[1] (K)", a.shape[1], b.shape[1])
    if out is not None:
        checks.tensor(_ENTRY, "out", out, dtype=torch.bfloat16, ranks=(2,), device=a.device)
        if tuple(out.shape) != (a.shape[0], b.shape[0]):
            raise checks.CakeArgumentError(f"{_ENTRY}: out has shape {list(out.shape)}; "
                                           f"expected [{a.shape[0]}, {b.shape[0]}]")


def _check_bias(bias: Any, a: torch.Tensor, n: int) -> None:
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
        raise checks.CakeArgumentError(f"{_ENTRY}: bias must be a floating-point tensor")
    if tuple(bias.shape) != (n,) or bias.device != a.device:
        raise checks.CakeArgumentError(f"{_ENTRY}: bias has shape {list(bias.shape)} on "
                                       f"{bias.device}; expected [{n}] on {a.device}")


def _gemm_impl(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cake::gemm's kernel (its checks run inside, on a new signature)."""
    return _run(a, b, None)


def _gemm_out_impl(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    _run(a, b, out)


def _gemm_fake(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[0]))


def _gemm_out_fake(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    return None


ops.define("gemm(Tensor a, Tensor b) -> Tensor", _gemm_impl, _gemm_fake)
ops.define("gemm_out(Tensor a, Tensor b, Tensor(a!) out) -> ()", _gemm_out_impl,
             _gemm_out_fake)


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None,
         bias: torch.Tensor | None = None) -> torch.Tensor:
    """a [M, K] and b [N, K] bf16 on one sm_90 GPU -> a · bᵀ [M, N] bf16 (written into `out`
    when given, which is returned). Rows of a and b must be 16-byte aligned (K % 8 == 0 for
    contiguous tensors). `bias` ([N], any float dtype) is added afterwards by torch: the
    kernels have no bias epilogue. The variant that runs is the route table's choice for
    (M, N, K) (`route_of`)."""
    if bias is None and not _compiling():
        return _run(a, b, out)
    if bias is not None:  # checked before anything runs
        _check(a, b, out)
        _check_bias(bias, a, b.shape[0])
    if _compiling():
        _check(a, b, out)
        if out is None:
            out = torch.ops.cake.gemm(a, b)
        else:
            torch.ops.cake.gemm_out(a, b, out)
    else:
        out = _run(a, b, out)
    return out if bias is None else out.add_(bias)
