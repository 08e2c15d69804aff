"""Kimi Delta Attention (KDA) on the shipped kernels: `kda_decode`, one new token per sequence
against a recurrent state in HBM (kda_decode.cake).

Shapes follow fla (`fla.ops.kda`): q, k [B, T, H, 128] bf16; v [B, T, HV, 128] bf16 (HV a
multiple of H: value head hv reads query/key head hv // (HV / H)); g [B, T, HV, 128] f32
log-decay (natural log, ≤ 0); beta [B, T, HV] f32 or bf16; the state [B, HV, 128, 128] f32
(keys × values). Per token: S ← diag(exp g) S; S ← S + k (β (v − Sᵀk))ᵀ; o = Sᵀ (scale · q).
"""

from __future__ import annotations

import math

import torch

from cakec.kernels import build, checks

_ENTRY = "cakec.kernels.kda_decode"
#: The key and value head dimension the kernels are written for.
DIM = 128


def _check_decode(q, k, v, g, beta, state, out, out_state=None) -> None:
    """CakeArgumentError for anything the decode kernel does not compute exactly."""
    checks.tensor(_ENTRY, "q", q, dtype=torch.bfloat16, ranks=(4,))
    dev = q.device
    checks.tensor(_ENTRY, "k", k, dtype=torch.bfloat16, ranks=(4,), device=dev)
    checks.tensor(_ENTRY, "v", v, dtype=torch.bfloat16, ranks=(4,), device=dev)
    checks.tensor(_ENTRY, "g", g, dtype=torch.float32, ranks=(4,), device=dev)
    if not isinstance(beta, torch.Tensor) or beta.dtype not in (torch.float32, torch.bfloat16):
        raise checks.CakeArgumentError(f"{_ENTRY}: beta must be a float32 or bfloat16 tensor "
                                       f"[B, 1, HV], got {getattr(beta, 'dtype', type(beta))}")
    checks.tensor(_ENTRY, "beta", beta, dtype=beta.dtype, ranks=(3,), device=dev)
    checks.tensor(_ENTRY, "state", state, dtype=torch.float32, ranks=(4,), device=dev)
    b, t, h, dk = q.shape
    hv = v.shape[2]
    if t != 1:
        raise checks.CakeArgumentError(f"{_ENTRY}: one token per sequence (q has T = {t}); "
                                       "use kda_prefill for T > 1")
    if dk != DIM or v.shape[3] != DIM:
        raise checks.CakeArgumentError(f"{_ENTRY}: head dims must be {DIM} (q has {dk}, v has "
                                       f"{v.shape[3]})")
    want = {"k": (k, (b, 1, h, DIM)), "v": (v, (b, 1, hv, DIM)), "g": (g, (b, 1, hv, DIM)),
            "beta": (beta, (b, 1, hv)), "state": (state, (b, hv, DIM, DIM))}
    if out is not None:
        checks.tensor(_ENTRY, "out", out, dtype=torch.bfloat16, ranks=(4,), device=dev)
        want["out"] = (out, (b, 1, hv, DIM))
    if out_state is not None:
        checks.tensor(_ENTRY, "out_state", out_state, dtype=torch.float32, ranks=(4,), device=dev)
        want["out_state"] = (out_state, (b, hv, DIM, DIM))
    for name, (x, shape) in want.items():
        if tuple(x.shape) != shape:
            raise checks.CakeArgumentError(f"{_ENTRY}: {name} has shape {list(x.shape)}; "
                                           f"expected {list(shape)} (from q {list(q.shape)} and "
                                           f"v {list(v.shape)})")
    if min(b, h, hv) < 1:
        raise checks.CakeArgumentError(f"{_ENTRY}: empty input (q {list(q.shape)}, v "
                                       f"{list(v.shape)})")
    if hv % h:
        raise checks.CakeArgumentError(f"{_ENTRY}: value heads ({hv}) must be a multiple of "
                                       f"query/key heads ({h})")
    if b * hv * DIM >= 2**31:
        raise checks.CakeArgumentError(f"{_ENTRY}: B·HV = {b * hv} is too large for 32-bit "
                                       "row indices of the state")
    for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("state", state),
                    ("out", out), ("out_state", out_state)):
        if x is not None and not x.is_contiguous():
            raise checks.CakeArgumentError(f"{_ENTRY}: {name} must be contiguous (strides "
                                           f"{list(x.stride())}); pass {name}.contiguous()")


def _scale(scale: float | None) -> float:
    if scale is None:
        return DIM ** -0.5
    scale = float(scale)
    if not math.isfinite(scale):
        raise checks.CakeArgumentError(f"{_ENTRY}: scale must be finite (got {scale})")
    return scale


def _decode_into(q, k, v, g, beta, state, out, out_state, scale: float) -> None:
    b, _, h, _ = q.shape
    hv = v.shape[2]
    beta = beta.reshape(b * hv)
    if beta.dtype != torch.float32 or beta.stride(0) != 1:
        beta = beta.float().contiguous()  # the kernel reads f32 β (one small copy otherwise)
    build.kernel("kda_decode", checks.target(_ENTRY, q))(
        q.view(b * h, DIM), k.view(b * h, DIM), v.view(b * hv, DIM), g.view(b * hv, DIM),
        beta, state.view(b * hv * DIM, DIM), out_state.view(b * hv * DIM, DIM),
        out.view(b * hv, DIM), b * hv, hv, h, scale,
        check=lambda: _check_decode(q, k, v, g, beta.view(b, 1, hv), state, out, out_state))


def kda_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
               beta: torch.Tensor, state: torch.Tensor, scale: float | None = None,
               out: torch.Tensor | None = None,
               out_state: torch.Tensor | None = None) -> torch.Tensor:
    """One decode step: q, k [B, 1, H, 128] bf16, v [B, 1, HV, 128] bf16, g [B, 1, HV, 128]
    f32, beta [B, 1, HV] (f32, or bf16: converted first), state [B, HV, 128, 128] f32.
    The new state is written into `out_state` when given, else into `state` in place.
    Returns o [B, 1, HV, 128] bf16 (written into `out` when given). `scale` defaults to
    128^-1/2. On an sm_90 GPU; all tensors contiguous, on one device."""
    _check_decode(q, k, v, g, beta, state, out, out_state)
    scale = _scale(scale)
    if out is None:
        out = torch.empty_like(v)
    if out_state is None:
        out_state = state
    _decode_into(q, k, v, g, beta, state, out, out_state, scale)
    return out
