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
from cakec.runtime import launch, routes
from cakec.runtime.tuning import gemm_extents as extents

_ENTRY = "cakec.kernels.gemm"
#: (M, N, K, device index) -> the route's callable, so a repeated shape costs one dict get.
_plans: dict[tuple[int, int, int, int], Callable[..., torch.Tensor]] = {}
_table: list[routes.Table] = []   # the route table, read on first use


def table() -> routes.Table:
    """gemm's route table (the shipped one, or $CAKEC_ROUTES_DIR's), read once."""
    if not _table:
        _table.append(routes.load("gemm"))
    return _table[0]


def route_of(m: int, n: int, k: int) -> str:
    """The route the table picks for an M×N×K product."""
    return table().choose(**extents(m, n, k))


#: Argument signatures the torch route has checked (the runtime's key: pointers, shapes,
#: strides, dtypes), oldest dropped first beyond the runtime's bind-cache size.
_torch_checked: dict[tuple, None] = {}
_SIG = {2: (True, True), 3: (True, True, True)}


def _torch_route(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None, m: int, n: int,
                 k: int, check: Callable[[], None]) -> torch.Tensor:
    """torch.matmul behind the entry's checks, which run on a new signature only, as for
    the Cake routes: measured on the H200's host, checking on every call made this route
    cost ~30 µs more than torch.matmul at small shapes."""
    args = (a, b) if out is None else (a, b, out)
    try:
        key = launch.signature(_SIG[len(args)], args)
    except Exception:  # noqa: BLE001 - not tensors: the checks say what is wrong
        key = None
    if key is None or key not in _torch_checked:
        check()
        if key is not None:
            if len(_torch_checked) >= launch.BIND_CACHE_SIZE:
                del _torch_checked[next(iter(_torch_checked))]
            _torch_checked[key] = None
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


def _split_scratch(a: torch.Tensor, s: int, m: int, n: int, tiles: int
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    dev = a.get_device()
    key = (dev, torch._C._cuda_getCurrentRawStream(dev), s, m, n, tiles)
    got = _split.get(key)
    if got is None:
        if len(_split) >= _SPLIT_CACHE:
            del _split[next(iter(_split))]
        got = _split[key] = (torch.empty((s, m, n), device=a.device, dtype=torch.float32),
                             torch.zeros(tiles, device=a.device, dtype=torch.int32))
    return got


def launcher(tab: routes.Table, route: str, a: torch.Tensor, m: int, n: int, k: int
             ) -> Callable[..., None]:
    """The Cake kernel of `route` as `run(a, b, c, m, n, k, check=None)` for this M, N, K
    (a plan's): a split-K route also gets its K parts (split_parts, for this shape on a's
    GPU) and the scratch of the current stream."""
    kern = build.kernel(tab.kernel(route), checks.target(_ENTRY, a))  # type: ignore[arg-type]
    tile = tab.split_tile(route)
    if tile is None:
        return kern
    dev = a.get_device()
    if dev not in _sms:
        _sms[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    s = routes.split_parts(tiles, -(-k // 64), _sms[dev], tile)

    def run(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, m: int, n: int, k: int,
            check: Callable[[], None] | None = None) -> None:
        w, counters = _split_scratch(a, s, m, n, tiles)
        kern(a, b, c, w, counters, m, n, k, s, check=check)
    return run


def _cake_route(kernel: Callable[..., None]) -> Callable[..., torch.Tensor]:
    """A Cake kernel as a route: allocate the output when none is given, launch (the
    kernel runs `check` before binding a new signature)."""
    def run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None, m: int, n: int,
            k: int, check: Callable[[], None]) -> torch.Tensor:
        if out is None:
            out = a.new_empty((m, n))
        kernel(a, b, out, m, n, k, check=check)
        return out
    return run


def _plan(key: tuple[int, int, int, int], a: torch.Tensor) -> Callable[..., torch.Tensor]:
    m, n, k, _ = key
    route = route_of(m, n, k)
    fn = (_torch_route if table().kernel(route) is None
          else _cake_route(launcher(table(), route, a, m, n, k)))
    _plans[key] = fn
    return fn


def _run(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    """a · bᵀ (into `out` when given) through the route of this shape: its checks run
    only on an argument signature it has not seen (they depend on nothing else), so a
    repeated call costs a plan lookup more than the route itself. Degenerate products
    (an empty extent) are checked and computed here."""
    try:
        (m, k), n = a.shape, b.shape[0]
    except (AttributeError, TypeError, ValueError, IndexError):
        m = n = k = 0  # not 2-D tensors: the checks below say so
    if not (m and n and k):
        _check(a, b, out)
        (m, k), n = a.shape, b.shape[0]
        if out is None:
            out = a.new_empty((m, n))
        if m and n:
            out.zero_()  # K = 0: the empty sum
        return out
    key = (m, n, k, a.get_device())
    fn = _plans.get(key) or _plan(key, a)
    return fn(a, b, out, m, n, k, lambda: _check(a, b, out))


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
    if bias is not None:  # checked before anything runs
        _check(a, b, out)
        _check_bias(bias, a, b.shape[0])
    if torch.compiler.is_compiling():
        _check(a, b, out)
        if out is None:
            out = torch.ops.cake.gemm(a, b)
        else:
            torch.ops.cake.gemm_out(a, b, out)
    else:
        out = _run(a, b, out)
    return out if bias is None else out.add_(bias)
