"""Kimi Delta Attention (KDA) on the shipped kernels: `kda_decode`, one new token per sequence
against a recurrent state in HBM (kda_decode.cake; kda_decode_ring.cake for many heads), and `kda_prefill`, whole sequences with
the state kept on chip (kda_prefill_prep.cake + kda_prefill_state.cake: the chunked form
split over the sequence, the default from two chunks; kda_prefill_chunked.cake: the same
form fused, chunks of 64 tokens on wgmma, the default for one chunk;
kda_prefill_recurrent.cake token by token, for short sequences).

Shapes follow fla (`fla.ops.kda`): q, k [B, T, H, 128] bf16; v [B, T, HV, 128] bf16 (HV a
multiple of H: value head hv reads query/key head hv // (HV / H)); g [B, T, HV, 128] f32
log-decay (natural log, ≤ 0); beta [B, T, HV] f32 or bf16; the state [B, HV, 128, 128] f32
(keys × values). Per token: S ← diag(exp g) S; S ← S + k (β (v − Sᵀk))ᵀ; o = Sᵀ (scale · q).
"""

from __future__ import annotations

import math

import torch

from cakec.kernels import build, checks
from cakec.kernels.kda_prefill_launch import (  # noqa: F401 (re-exported: kda's public names)
    CHUNK_DECAY_MIN, CHUNKED_BY_DEFAULT, CHUNKED_MIN_T, DIM, PREFILL_KERNELS, RUNS,
    SEGMENTED_STATE_PASS, SPLIT_MIN_T, by_length, decay_in_range, default_kernel,
    entry_segments, recurrent, sm_count, split_launches, state_segments)
from cakec.kernels.kda_varlen import prefill_varlen

_ENTRY = "cakec.kernels.kda_decode"
#: From this many heads (B·HV) up a decode step takes kda_decode_ring.cake (persistent CTAs,
#: 32-column blocks of the state brought by TMA through a shared-memory ring) instead of
#: kda_decode.cake (16 columns, 8 CTAs per head). Measured side by side on an H100
#: (2026-12-05, bench/kda_decode_widths.py and bench/kda_decode_probe.py; docs/kernels.md):
#: the ring is faster from 2048 heads up (B = 64, HV = 32 and B = 256), kda_decode.cake at
#: B ≤ 8 and level with it at 1024.
DECODE_RING_MIN_HEADS = 2048


def _decode_route(heads: int) -> str:
    """The decode kernel for B·HV = `heads`."""
    return "kda_decode_ring" if heads >= DECODE_RING_MIN_HEADS else "kda_decode"


def _check_tokens(entry: str, q, k, v, g, beta, *, one_token: bool) -> tuple[int, int, int, int]:
    """The checks both entries make of q, k, v, g and beta ([B, T, ·]); returns B, T, H, HV."""
    checks.tensor(entry, "q", q, dtype=torch.bfloat16, ranks=(4,))
    dev = q.device
    b, t, h, dk = q.shape
    if one_token and t != 1:
        raise checks.CakeArgumentError(f"{entry}: one token per sequence (q has T = {t}); "
                                       "use kda_prefill for T > 1")
    checks.tensor(entry, "k", k, dtype=torch.bfloat16, ranks=(4,), device=dev)
    checks.tensor(entry, "v", v, dtype=torch.bfloat16, ranks=(4,), device=dev)
    checks.tensor(entry, "g", g, dtype=torch.float32, ranks=(4,), device=dev)
    if not isinstance(beta, torch.Tensor) or beta.dtype not in (torch.float32, torch.bfloat16):
        raise checks.CakeArgumentError(f"{entry}: beta must be a float32 or bfloat16 tensor "
                                       f"[B, T, HV], got {getattr(beta, 'dtype', type(beta))}")
    checks.tensor(entry, "beta", beta, dtype=beta.dtype, ranks=(3,), device=dev)
    hv = v.shape[2]
    if dk != DIM or v.shape[3] != DIM:
        raise checks.CakeArgumentError(f"{entry}: head dims must be {DIM} (q has {dk}, v has "
                                       f"{v.shape[3]})")
    for name, x, shape in (("k", k, (b, t, h, DIM)), ("v", v, (b, t, hv, DIM)),
                           ("g", g, (b, t, hv, DIM)), ("beta", beta, (b, t, hv))):
        if tuple(x.shape) != shape:
            raise checks.CakeArgumentError(f"{entry}: {name} has shape {list(x.shape)}; "
                                           f"expected {list(shape)} (from q {list(q.shape)} "
                                           f"and v {list(v.shape)})")
    if min(b, t, h, hv) < 1:
        raise checks.CakeArgumentError(f"{entry}: empty input (q {list(q.shape)}, v "
                                       f"{list(v.shape)})")
    if hv % h:
        raise checks.CakeArgumentError(f"{entry}: value heads ({hv}) must be a multiple of "
                                       f"query/key heads ({h})")
    return b, t, h, hv


def _check_decode(q, k, v, g, beta, state, out, out_state=None) -> None:
    """CakeArgumentError for anything the decode kernel does not compute exactly."""
    b, _, _, hv = _check_tokens(_ENTRY, q, k, v, g, beta, one_token=True)
    for name, x, dtype, shape in (("state", state, torch.float32, (b, hv, DIM, DIM)),
                                  ("out", out, torch.bfloat16, (b, 1, hv, DIM)),
                                  ("out_state", out_state, torch.float32, (b, hv, DIM, DIM))):
        if x is None:
            continue
        checks.tensor(_ENTRY, name, x, dtype=dtype, ranks=(4,), device=q.device)
        if tuple(x.shape) != shape:
            raise checks.CakeArgumentError(f"{_ENTRY}: {name} has shape {list(x.shape)}; "
                                           f"expected {list(shape)} (from q {list(q.shape)} "
                                           f"and v {list(v.shape)})")
    if b * hv * DIM >= 2**31:
        raise checks.CakeArgumentError(f"{_ENTRY}: B·HV = {b * hv} is too large for 32-bit "
                                       "row indices of the state")
    if out_state is not None and out_state.data_ptr() != state.data_ptr() and (
            out_state.untyped_storage().data_ptr() == state.untyped_storage().data_ptr()):
        raise checks.CakeArgumentError(f"{_ENTRY}: out_state overlaps state without being it; "
                                       "pass the same tensor (in place) or a separate one")
    for name, x in (("q", q), ("k", k), ("v", v), ("g", g), ("beta", beta), ("state", state),
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
    flat_beta = beta.view(b * hv)
    if flat_beta.dtype != torch.float32:
        flat_beta = flat_beta.float()  # the kernel reads f32 β (one small copy for bf16)
    build.kernel(_decode_route(b * hv), checks.target(_ENTRY, q))(
        q.view(b * h, DIM), k.view(b * h, DIM), v.view(b * hv, DIM), g.view(b * hv, DIM),
        flat_beta, state.view(b * hv * DIM, DIM), out_state.view(b * hv * DIM, DIM),
        out.view(b * hv, DIM), b * hv, hv, h, scale,
        check=lambda: _check_decode(q, k, v, g, beta, state, out, out_state))


def kda_decode(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
               beta: torch.Tensor, state: torch.Tensor, scale: float | None = None,
               out: torch.Tensor | None = None,
               out_state: torch.Tensor | None = None) -> torch.Tensor:
    """One decode step: q, k [B, 1, H, 128] bf16, v [B, 1, HV, 128] bf16, g [B, 1, HV, 128]
    f32, beta [B, 1, HV] (f32, or bf16: converted first), state [B, HV, 128, 128] f32.
    The new state is written into `out_state` when given, else into `state` in place.
    Returns o [B, 1, HV, 128] bf16 (written into `out` when given). `scale` defaults to
    128^-1/2. On an sm_90 GPU; all tensors contiguous, on one device.

    The arguments are checked in full whenever the kernel meets a new signature (shapes,
    strides, dtypes of the views it is given), and whenever building those views fails; a
    replayed step costs the launch and the views only."""
    scale = _scale(scale)
    try:
        if out is None:
            out = torch.empty_like(v)
        _decode_into(q, k, v, g, beta, state, out, state if out_state is None else out_state,
                     scale)
    except checks.CakeArgumentError:
        raise
    except Exception:  # a view or a shape that does not fit: say which argument is wrong
        _check_decode(q, k, v, g, beta, state, out, out_state)
        raise
    return out


# ---- prefill --------------------------------------------------------------------------------

_PREFILL = "cakec.kernels.kda_prefill"


def _check_prefill(q, k, v, g, beta, initial_state, cu_seqlens) -> list[int] | None:
    """CakeArgumentError for anything the prefill kernel does not compute exactly; the
    sequence starts (cu_seqlens on the host: one wait for the device) or None."""
    b, t, h, hv = _check_tokens(_PREFILL, q, k, v, g, beta, one_token=False)
    dev = q.device
    n, cu = b, None
    if cu_seqlens is not None:
        if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.dtype not in (
                torch.int32, torch.int64) or cu_seqlens.dim() != 1 or cu_seqlens.numel() < 2:
            raise checks.CakeArgumentError(f"{_PREFILL}: cu_seqlens must be a 1-D int32/int64 "
                                           "tensor [N + 1] of sequence starts")
        if b != 1:
            raise checks.CakeArgumentError(f"{_PREFILL}: with cu_seqlens the batch is one "
                                           f"flattened sequence (B = 1), got B = {b}")
        cu = cu_seqlens.tolist()
        if cu[0] != 0 or cu[-1] != t or any(y < x for x, y in zip(cu, cu[1:])):
            raise checks.CakeArgumentError(f"{_PREFILL}: cu_seqlens must rise from 0 to T = {t} "
                                           f"(got {cu[:4]}{'...' if len(cu) > 4 else ''})")
        n = len(cu) - 1
    if initial_state is not None:
        checks.tensor(_PREFILL, "initial_state", initial_state, dtype=torch.float32, ranks=(4,),
                      device=dev)
        if tuple(initial_state.shape) != (n, hv, DIM, DIM):
            raise checks.CakeArgumentError(f"{_PREFILL}: initial_state has shape "
                                           f"{list(initial_state.shape)}; expected "
                                           f"{[n, hv, DIM, DIM]}")
    if max(b * t * hv, n * hv * DIM) >= 2**31:
        raise checks.CakeArgumentError(f"{_PREFILL}: too many tokens·heads for 32-bit rows")
    return cu


def _padded(x: torch.Tensor, cu: list[int], t_max: int) -> torch.Tensor:
    """[1, T, ...] of N concatenated sequences as [N, t_max, ...], zero after each end (a
    zero key and gate leave the state as it is, so padding changes no final state)."""
    out = x.new_zeros((len(cu) - 1, t_max, *x.shape[2:]))
    for i, (lo, hi) in enumerate(zip(cu, cu[1:])):
        out[i, :hi - lo] = x[0, lo:hi]
    return out


#: Whether kda_prefill runs a variable-length batch (cu_seqlens) in groups (kda_varlen.py:
#: the longest sequences alone on views of the packed inputs, the rest padded per class of
#: length, the groups on several streams) rather than padding every sequence to the longest.
#: H100 80GB HBM3, 2026-12-06, `bench/kda_segments.py --varlen` (both in the same interleaved
#: rounds; grouped against padded o 2e-5–2e-4, S 2e-5–1.2e-3): varlen5x16 2.075 → 1.371 ms
#: (1.51×), varlen9x16 3.279 → 1.574 (2.08×), varlen64x16 6.465 → 3.356 (1.93×), varlen1x16
#: 0.907 → 0.765 (1.19×); the GPU tests ran with it on (test_kda_gpu.py -k varlen).
VARLEN_GROUPED = True


def kda_prefill(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, g: torch.Tensor,
                beta: torch.Tensor, scale: float | None = None,
                initial_state: torch.Tensor | None = None,
                cu_seqlens: torch.Tensor | None = None,
                output_final_state: bool = False, kernel: str | None = None):
    """(o [B, T, HV, 128] bf16, final state [N, HV, 128, 128] f32 or None), fla's
    `chunk_kda` contract: q, k [B, T, H, 128] bf16, v [B, T, HV, 128] bf16, g [B, T, HV, 128]
    f32 log-decay, beta [B, T, HV] f32 or bf16, any T ≥ 1; `cu_seqlens` [N + 1] for N
    sequences concatenated in a B = 1 batch; `initial_state` [N, HV, 128, 128] f32.

    By default (`kernel=None`) the chunked form for sequences of at least CHUNKED_MIN_T
    tokens whose gates decay by no more than CHUNK_DECAY_MIN over a chunk (checked on the
    device: one pass over g and a host sync): from SPLIT_MIN_T tokens the sequence-split pair
    (kda_prefill_prep.cake computes every chunk's state-free tiles at once into a bf16
    workspace, about 1 KiB per token and value head; kda_prefill_state.cake then runs the
    state pass, two CTAs per sequence and value head, its inputs brought by TMA; in
    sequence segments for few heads once SEGMENTED_STATE_PASS is on), below it
    kda_prefill_chunked.cake (one CTA per sequence and value head: chunks of 64 tokens on
    wgmma, the state in registers across every chunk); else kda_prefill_recurrent.cake
    (token by token, exact for any decay). Every kernel keeps the state on chip from the
    first chunk to the last and masks a ragged last chunk. `kernel=` names one of
    PREFILL_KERNELS instead. Variable-length batches run in groups (kda_varlen.py: the
    longest sequences alone on views of the packed inputs, the others padded per class of
    length, the groups on several streams, each group on its own default kernel or the one
    named) while VARLEN_GROUPED is on (the default); with it off they are padded to the
    longest sequence first (zero keys and gates leave the state unchanged)."""
    cu = _check_prefill(q, k, v, g, beta, initial_state, cu_seqlens)
    if kernel is not None and kernel not in PREFILL_KERNELS:
        raise checks.CakeArgumentError(f"{_PREFILL}: kernel must be one of {PREFILL_KERNELS}, "
                                       f"got {kernel!r}")
    scale = _scale(scale)
    if cu is not None and VARLEN_GROUPED:
        o, final = prefill_varlen(q, k, v, g, beta, initial_state, cu, scale,
                                  checks.target(_PREFILL, q), kernel)
        return o, (final if output_final_state else None)
    if cu is not None:
        t_max = max(y - x for x, y in zip(cu, cu[1:]))
        q, k, v, g, beta = (_padded(x, cu, t_max) for x in (q, k, v, g, beta))
    target = checks.target(_PREFILL, q)
    if kernel is None:
        kernel = by_length(q.shape[0], q.shape[1], v.shape[2])
        # The decay check is queued ahead of the chunked-form kernels and read after they
        # were launched: the host waits for the check's reduction only (an event), not for
        # the kernels, and a batch beyond the range is redone by the recurrent kernel.
        in_range = None if kernel == "kda_prefill_recurrent" else decay_in_range(g)
        o, final = RUNS[kernel](q, k, v, g, beta, initial_state, scale, target)
        if in_range is not None and not in_range():
            o, final = recurrent(q, k, v, g, beta, initial_state, scale, target)
    else:
        o, final = RUNS[kernel](q, k, v, g, beta, initial_state, scale, target)
    if cu is not None:
        o = torch.cat([o[i, :hi - lo] for i, (lo, hi) in enumerate(zip(cu, cu[1:]))])[None]
    return o, (final if output_final_state else None)


