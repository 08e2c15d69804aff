"""`gemm(a, b)`: C = a · bᵀ in bf16 with f32 accumulation (gemm_bf16.cake), as the torch op
`cake::gemm` (and `cake::gemm_out` writing into a given tensor)."""

from __future__ import annotations

import torch

from cakec.kernels import build, checks

_ENTRY = "cakec.kernels.gemm"


def _into(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """out = a · bᵀ; `_check` runs only when the kernel has not bound this signature before
    (the checks depend on nothing else), so a replayed call costs about what the runtime's
    does."""
    (m, k), n = a.shape, b.shape[0]
    if m == 0 or n == 0:
        return
    if k == 0:
        out.zero_()
        return
    build.kernel("gemm_bf16", checks.target(_ENTRY, a))(a, b, out, m, n, k,
                                                       check=lambda: _check(a, b, out))


@torch.library.custom_op("cake::gemm", mutates_args=())
def _gemm(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return _gemm_direct(a, b)


@_gemm.register_fake
def _(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[0]))


@torch.library.custom_op("cake::gemm_out", mutates_args=("out",))
def _gemm_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    _into(a, b, out)


@_gemm_out.register_fake
def _(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    return None


def _check(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> None:
    checks.tensor(_ENTRY, "a", a, dtype=torch.bfloat16, ranks=(2,), tma=True)
    checks.tensor(_ENTRY, "b", b, dtype=torch.bfloat16, ranks=(2,), device=a.device, tma=True)
    checks.same(_ENTRY, "a.shape[1] and b.shape[1] (K)", a.shape[1], b.shape[1])
    if out is not None:
        checks.tensor(_ENTRY, "out", out, dtype=torch.bfloat16, ranks=(2,), device=a.device)
        if tuple(out.shape) != (a.shape[0], b.shape[0]):
            raise checks.CakeArgumentError(f"{_ENTRY}: out has shape {list(out.shape)}; "
                                           f"expected [{a.shape[0]}, {b.shape[0]}]")


def _check_bias(bias: torch.Tensor, a: torch.Tensor, n: int) -> None:
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
        raise checks.CakeArgumentError(f"{_ENTRY}: bias must be a floating-point tensor")
    if tuple(bias.shape) != (n,) or bias.device != a.device:
        raise checks.CakeArgumentError(f"{_ENTRY}: bias has shape {list(bias.shape)} on "
                                       f"{bias.device}; expected [{n}] on {a.device}")


def gemm(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None,
         bias: torch.Tensor | None = None) -> torch.Tensor:
    """a [M, K] and b [N, K] bf16 on one sm_90 GPU -> a · bᵀ [M, N] bf16 (written into `out`
    when given, which is returned). Rows of a and b must be 16-byte aligned (K % 8 == 0 for
    contiguous tensors). `bias` ([N], any float dtype) is added afterwards by torch: the
    kernel has no bias epilogue."""
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
    except (AttributeError, TypeError, ValueError):
        m = n = k = 0
    if not (m and n and k):  # not 2-D tensors, or an empty product: checked up front
        _check(a, b, out)
        if out is None:
            return _gemm_direct(a, b)
        _into(a, b, out)
        return out
    if out is None:
        out = torch.empty((m, n), device=device, dtype=torch.bfloat16)
    _into(a, b, out)
    return out


def _gemm_direct(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """cake::gemm's body."""
    out = torch.empty((a.shape[0], b.shape[0]), device=a.device, dtype=torch.bfloat16)
    _into(a, b, out)
    return out
