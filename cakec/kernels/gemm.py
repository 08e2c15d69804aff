"""`gemm(a, b)`: C = a · bᵀ in bf16 with f32 accumulation, as the torch op `cake::gemm` (and
`cake::gemm_out` writing into a given tensor), dispatched by shape over the variants in
cakec/kernels/gemm_routes.json (docs/kernels.md): the persistent 128×256 tile
(gemm_bf16.cake), a 128×128 one, the skinny decode tiles (gemm_bf16_skinny*.cake), and
torch.matmul where the table says no Cake route wins."""

from __future__ import annotations

from typing import Any, Callable

import torch

from cakec.kernels import build, checks, ops
from cakec.runtime import routes

_ENTRY = "cakec.kernels.gemm"
#: (M, N, K, device index) -> the route's callable, so a repeated shape costs one dict get.
_plans: dict[tuple[int, int, int, int], Callable[..., None]] = {}
_table: list[routes.Table] = []   # the route table, read on first use


def table() -> routes.Table:
    """gemm's route table (the shipped one, or $CAKEC_ROUTES_DIR's), read once."""
    if not _table:
        _table.append(routes.load("gemm"))
    return _table[0]


def extents(m: int, n: int, k: int) -> dict[str, int]:
    """What gemm's rules may bound: the extents, and the two alignments that change which
    kernel is fastest (measured: K % 64 != 0 costs our TMA loads, N % 8 != 0 cuBLAS)."""
    return {"m": m, "n": n, "k": k, "k_mod64": k % 64, "n_mod8": n % 8}


def route_of(m: int, n: int, k: int) -> str:
    """The route the table picks for an M×N×K product."""
    return table().choose(**extents(m, n, k))


def _torch_route(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, m: int, n: int, k: int,
                 check: Callable[[], None]) -> None:
    check()  # no binding caches the checks here: they run every call
    torch.matmul(a, b.t(), out=out)


def _plan(key: tuple[int, int, int, int], a: torch.Tensor) -> Callable[..., None]:
    m, n, k, _ = key
    kernel = table().kernel(route_of(m, n, k))
    fn = _torch_route if kernel is None else build.kernel(kernel, checks.target(_ENTRY, a))
    _plans[key] = fn
    return fn


def _into(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """out = a · bᵀ through the route of this shape. `_check` runs only when the route's
    kernel has not bound this argument signature before (the checks depend on nothing
    else), so a replayed call costs a plan lookup more than the runtime's launch."""
    (m, k), n = a.shape, b.shape[0]
    if m == 0 or n == 0:
        return
    if k == 0:
        out.zero_()
        return
    key = (m, n, k, a.get_device())
    fn = _plans.get(key) or _plan(key, a)
    fn(a, b, out, m, n, k, check=lambda: _check(a, b, out))


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
    out = torch.empty((a.shape[0], b.shape[0]), device=a.device, dtype=torch.bfloat16)
    _into(a, b, out)
    return out


def _gemm_out_impl(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    _into(a, b, out)


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
        out = _eager(a, b, out)
    return out if bias is None else out.add_(bias)


def _eager(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> torch.Tensor:
    try:
        (m, k), n, device = a.shape, b.shape[0], a.device
    except (AttributeError, TypeError, ValueError, IndexError):
        m = n = k = 0
    if not (m and n and k):  # not 2-D tensors, or an empty product: checked up front
        _check(a, b, out)
        if out is None:
            return _gemm_impl(a, b)
        _into(a, b, out)
        return out
    if out is None:
        out = torch.empty((m, n), device=device, dtype=torch.bfloat16)
    _into(a, b, out)
    return out
