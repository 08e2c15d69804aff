"""`gemm_bias_gelu(a, b, bias)`: C = gelu_tanh(a · bᵀ + bias) in bf16 with f32 accumulation and
epilogue, as the torch op `cake::gemm_bias_gelu` (and `cake::gemm_bias_gelu_out`), on one of
two ping-pong schedules of the same kernel chosen by shape (`schedule_of`):

* gemm_bias_gelu_staged.cake: each consumer stages its bf16 tile in SMEM (stmatrix) and TMA
  stores it; a 5-stage ring. Its epilogue is cheap, which is what decides a grid of few tiles
  per CTA, where the last tile's epilogue runs alone after the last MMA;
* gemm_bias_gelu.cake: 64 bounds-checked 4-byte stores per thread, under the other
  consumer's MMAs; a 6-stage ring, which is what decides a grid of many tiles per CTA.

Measured on the H200 (bench/gemm_epilogues.py: both schedules beside the torch pair in one
process, three measurements in two runs), ms, staged vs 6-stage: 1024×4096×4096 0.054-0.056 vs
0.063 (1.9 tiles per CTA), 2048×4096×4096 0.108-0.110 vs 0.113 (3.9), 3072×4096×4096 0.166 vs
0.165 (5.8), 4096×4096×4096 0.221-0.225 vs 0.220-0.224 (7.8); 2048×14336×4096 0.383-0.390 vs
0.379 (13.6), 8192×4096×4096 0.448-0.450 vs 0.430-0.438 (15.5), 8192×14336×4096 1.511-1.520
vs 1.481-1.488 (54). So the staged one up to 5 tiles per CTA, where it wins or ties."""

from __future__ import annotations

from typing import Any, Callable

import torch

from cakec.kernels import build, checks, ops

_ENTRY = "cakec.kernels.gemm_bias_gelu"
STAGED, DIRECT = "gemm_bias_gelu_staged", "gemm_bias_gelu"
#: The most 128×128 tiles per CTA (tiles / SMs) the staged schedule is chosen for.
STAGED_MAX_WAVES = 5
_plans: dict[tuple[int, int, int, int, bool], Callable[..., None]] = {}
_sms: dict[int, int] = {}


def schedule_of(m: int, n: int, sms: int, c_rows_aligned: bool = True) -> str:
    """The kernel an M×N product takes on a GPU of `sms` SMs: the staged one where its TMA
    store can describe C (rows 16-byte aligned: N % 8 == 0 for a contiguous C) and the grid
    has at most STAGED_MAX_WAVES tiles per CTA, else the 6-stage one (any N)."""
    tiles = -(-m // 128) * -(-n // 128)
    return STAGED if c_rows_aligned and tiles <= STAGED_MAX_WAVES * sms else DIRECT


def _check(a: Any, b: Any, bias: Any, out: Any) -> None:
    checks.tensor(_ENTRY, "a", a, dtype=torch.bfloat16, ranks=(2,), tma=True)
    checks.tensor(_ENTRY, "b", b, dtype=torch.bfloat16, ranks=(2,), device=a.device, tma=True)
    checks.same(_ENTRY, "a.shape[1] and b.shape[1] (K)", a.shape[1], b.shape[1])
    n = b.shape[0]
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point():
        raise checks.CakeArgumentError(f"{_ENTRY}: bias must be a floating-point tensor")
    if tuple(bias.shape) != (n,) or bias.device != a.device:
        raise checks.CakeArgumentError(f"{_ENTRY}: bias has shape {list(bias.shape)} on "
                                       f"{bias.device}; expected [{n}] on {a.device}")
    if out is not None:
        checks.tensor(_ENTRY, "out", out, dtype=torch.bfloat16, ranks=(2,), device=a.device)
        if tuple(out.shape) != (a.shape[0], n):
            raise checks.CakeArgumentError(f"{_ENTRY}: out has shape {list(out.shape)}; "
                                           f"expected [{a.shape[0]}, {n}]")


def _bias_row(bias: torch.Tensor, n: int) -> torch.Tensor:
    """bias as the kernels' Bias [1, N] f32. The 6-stage kernel reads it by TMA, whose row
    pitch must be a multiple of 16 bytes: a one-row tensor never steps by it, so the view
    declares the padded pitch over the same storage (no copy for a contiguous f32 bias)."""
    if bias.dtype != torch.float32 or bias.stride(0) != 1 or bias.data_ptr() % 16:
        bias = bias.float().contiguous()  # a cast: one small kernel per call
    return bias.as_strided((1, n), (-(-n // 4) * 4, 1))


def _plan(key: tuple[int, int, int, int, bool], a: torch.Tensor, b: torch.Tensor,
          bias: torch.Tensor, out: torch.Tensor) -> Callable[..., None]:
    """The kernel of a new (M, N, K, device, C alignment), after the full checks (a CPU
    tensor, say, is refused here before any device query)."""
    _check(a, b, bias, out)
    m, n, _, dev, aligned = key
    if dev not in _sms:
        _sms[dev] = torch.cuda.get_device_properties(dev).multi_processor_count
    kernel = build.kernel(schedule_of(m, n, _sms[dev], aligned), checks.target(_ENTRY, a))
    _plans[key] = kernel
    return kernel


def _run(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor,
         out: torch.Tensor | None) -> torch.Tensor:
    """gelu(a · bᵀ + bias) (into `out` when given) by the schedule of this shape; the checks
    run on an argument signature the kernel has not bound (the runtime's rule, as for gemm).
    Empty extents are computed here: K = 0 is gelu(bias) in every row."""
    try:
        (m, k), n = a.shape, b.shape[0]
    except (AttributeError, TypeError, ValueError, IndexError):
        m = n = k = 0  # not 2-D tensors: the checks below say so
    if not (m and n and k):
        _check(a, b, bias, out)
        (m, k), n = a.shape, b.shape[0]
        if out is None:
            out = a.new_empty((m, n))
        if m and n:
            out.copy_(torch.nn.functional.gelu(bias.float(), approximate="tanh").expand(m, n))
        return out
    if not isinstance(bias, torch.Tensor) or bias.shape != (n,):
        _check(a, b, bias, out)  # raises: _bias_row needs a bias of N elements
    if out is None:
        out = a.new_empty((m, n))
    aligned = (isinstance(out, torch.Tensor) and out.dim() == 2 and out.stride(0) % 8 == 0
               and out.data_ptr() % 16 == 0)
    key = (m, n, k, a.get_device(), aligned)
    kernel = _plans.get(key) or _plan(key, a, b, bias, out)
    kernel(a, b, _bias_row(bias, n), out, m, n, k, check=lambda: _check(a, b, bias, out))
    return out


def _impl(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return _run(a, b, bias, None)


def _out_impl(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor, out: torch.Tensor) -> None:
    _run(a, b, bias, out)


def _fake(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return a.new_empty((a.shape[0], b.shape[0]))


def _out_fake(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor, out: torch.Tensor) -> None:
    return None


ops.define("gemm_bias_gelu(Tensor a, Tensor b, Tensor bias) -> Tensor", _impl, _fake)
ops.define("gemm_bias_gelu_out(Tensor a, Tensor b, Tensor bias, Tensor(a!) out) -> ()",
           _out_impl, _out_fake)


def gemm_bias_gelu(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor,
                   out: torch.Tensor | None = None) -> torch.Tensor:
    """a [M, K] and b [N, K] bf16, bias [N] (f32 is read in place; another float dtype is
    cast per call) on one sm_90 GPU -> gelu_tanh(a · bᵀ + bias) [M, N] bf16, written into
    `out` when given (and returned). Rows of a and b must be 16-byte aligned (K % 8 == 0 for
    contiguous tensors). The schedule is `schedule_of`'s choice for (M, N)."""
    if torch.compiler.is_compiling():
        _check(a, b, bias, out)
        if out is None:
            return torch.ops.cake.gemm_bias_gelu(a, b, bias)
        torch.ops.cake.gemm_bias_gelu_out(a, b, bias, out)
        return out
    return _run(a, b, bias, out)
