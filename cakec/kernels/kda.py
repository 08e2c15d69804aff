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
from dataclasses import dataclass

import torch

from cakec.kernels import build, checks

_ENTRY = "cakec.kernels.kda_decode"
#: The key and value head dimension the kernels are written for.
DIM = 128
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
#: Off until a GPU run measures it correct and faster (bench/kda.py's varlen rows time both;
#: CPU-simulated only, 2026-12-05).
VARLEN_GROUPED = False
#: Whether kda_prefill picks a chunked-form kernel by itself: yes since the H200 run of
#: 2026-12-01 (test/gpu/test_kda_gpu.py's prefill cases passed; racecheck 0 hazards,
#: synccheck 0 errors at a ragged small shape).
CHUNKED_BY_DEFAULT = True
#: Where each kernel is the default, from bench/kda.py's short rows (B = 8, H = 16, ms
#: chunked / split / recurrent). H200 2026-12-02, main 4cb69c0: T = 1 0.126 / 0.121 /
#: 0.055; T = 16 0.139 / 0.146 / 0.097; T = 64 0.151 / 0.158 / 0.310; T = 256 0.603 / 0.335
#: / 1.531; T = 1024 2.060 / 1.165 / 6.195. The same day with one bounds decision per block
#: (branch kda16): T = 1 0.137 / 0.204 / 0.097; 16 0.149 / 0.220 / 0.106; 32 0.150 / 0.215
#: / 0.157; 64 0.147 / 0.208 / 0.308; 128 0.241 / 0.218 / 0.637; 256 0.459 / 0.216 /
#: 1.502; 1024 1.627 / 0.425 / 6.077. The recurrent kernel grows by ≈ 4 µs a token and
#: meets the fused chunked kernel's one-chunk cost at 32 tokens; the split pair costs ≈ 0.21
#: ms up to 256 tokens (its launches and workspace, host-bound) and wins from two chunks.
CHUNKED_MIN_T = 32
SPLIT_MIN_T = 65
#: The chunked kernel scales keys by 2^(±(γ − γ_C/2)) (γ the within-chunk cumulative log2
#: decay), finite in f32 while every channel's decay over a chunk of 64 tokens stays above
#: −2·126·ln 2 ≈ −174.7 (natural log); batches with a chunk beyond this run the recurrent
#: kernel, which is exact for any decay.
CHUNK_DECAY_MIN = -170.0
_CHUNK = 64
#: The prefill kernels by name (bench/kda.py and the GPU tests run each): the fused chunked
#: kernel, the sequence-split one (kda_prefill_prep.cake for every chunk at once, then
#: kda_prefill_state.cake's state pass) and the token-by-token one.
PREFILL_KERNELS = ("kda_prefill_chunked", "kda_prefill_split", "kda_prefill_recurrent")


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
    named) once VARLEN_GROUPED is on; while it is off (the default) they are padded to the
    longest sequence first (zero keys and gates leave the state unchanged)."""
    cu = _check_prefill(q, k, v, g, beta, initial_state, cu_seqlens)
    if kernel is not None and kernel not in PREFILL_KERNELS:
        raise checks.CakeArgumentError(f"{_PREFILL}: kernel must be one of {PREFILL_KERNELS}, "
                                       f"got {kernel!r}")
    scale = _scale(scale)
    if cu is not None and VARLEN_GROUPED:
        from cakec.kernels.kda_varlen import prefill_varlen

        o, final = prefill_varlen(q, k, v, g, beta, initial_state, cu, scale,
                                  checks.target(_PREFILL, q), kernel)
        return o, (final if output_final_state else None)
    if cu is not None:
        t_max = max(y - x for x, y in zip(cu, cu[1:]))
        q, k, v, g, beta = (_padded(x, cu, t_max) for x in (q, k, v, g, beta))
    target = checks.target(_PREFILL, q)
    if kernel is None:
        kernel = _by_length(q.shape[0], q.shape[1], v.shape[2])
        # The decay check is queued ahead of the chunked-form kernels and read after they
        # were launched: the host waits for the check's reduction only (an event), not for
        # the kernels, and a batch beyond the range is redone by the recurrent kernel.
        in_range = None if kernel == "kda_prefill_recurrent" else _decay_in_range(g)
        o, final = _RUN[kernel](q, k, v, g, beta, initial_state, scale, target)
        if in_range is not None and not in_range():
            o, final = _recurrent(q, k, v, g, beta, initial_state, scale, target)
    else:
        o, final = _RUN[kernel](q, k, v, g, beta, initial_state, scale, target)
    if cu is not None:
        o = torch.cat([o[i, :hi - lo] for i, (lo, hi) in enumerate(zip(cu, cu[1:]))])[None]
    return o, (final if output_final_state else None)


def default_kernel(g: torch.Tensor, hv: int) -> str:
    """kda_prefill's pick for gates g [B, T, HV, 128] (after varlen padding): by T
    (CHUNKED_MIN_T, SPLIT_MIN_T), the chunked-form kernels only while every chunk's decay
    stays above CHUNK_DECAY_MIN (this asks the device and waits), the split one only while
    its workspace rows fit 32 bits."""
    pick = _by_length(g.shape[0], g.shape[1], hv)
    if pick != "kda_prefill_recurrent" and not _decay_in_range(g)():
        return "kda_prefill_recurrent"
    return pick


def _by_length(b: int, t: int, hv: int) -> str:
    """The default kernel for B sequences of T tokens and HV value heads, the gates aside."""
    if not CHUNKED_BY_DEFAULT or t < CHUNKED_MIN_T:
        return "kda_prefill_recurrent"
    if t >= SPLIT_MIN_T and _split_rows(b, t, hv) < 2**31:
        return "kda_prefill_split"
    return "kda_prefill_chunked"


def _split_rows(b: int, t: int, hv: int) -> int:
    """Rows of kda_prefill_split's workspace: 64 per chunk, value head and sequence."""
    return b * hv * -(-t // _CHUNK) * _CHUNK


def _decay_in_range(g: torch.Tensor):
    """Queue the smallest total log-decay of one channel over one 64-token chunk (the last
    one ragged) and its copy to the host; returns a callable that waits for that copy only
    (an event recorded after it) and says whether it is at least CHUNK_DECAY_MIN."""
    return read_later(lowest_chunk_decay(g) >= CHUNK_DECAY_MIN)


def lowest_chunk_decay(g: torch.Tensor) -> torch.Tensor:
    """The smallest total log-decay of one channel over one 64-token chunk of g [B, T, HV,
    128] (the last one ragged), as a device scalar (queued, not waited for)."""
    b, t, hv, d = g.shape
    full = t // _CHUNK * _CHUNK
    parts = [g[:, full:].sum(dim=1).amin()] if full < t else []
    if full:
        parts.append(g[:, :full].reshape(b, t // _CHUNK, _CHUNK, hv, d).sum(dim=2).amin())
    return torch.stack(parts).amin() if len(parts) > 1 else parts[0]


def read_later(flag: torch.Tensor):
    """Queue the copy of a device boolean scalar to pinned host memory; returns a callable
    that waits for that copy only (an event recorded after it) and gives the boolean."""
    host = torch.empty((), dtype=torch.bool, pin_memory=True)
    host.copy_(flag, non_blocking=True)
    done = torch.cuda.Event()
    done.record()

    def value() -> bool:
        done.synchronize()
        return bool(host.item())

    return value


_levels: dict[torch.device, torch.Tensor] = {}


def _level_table(device: torch.device) -> torch.Tensor:
    """[64, 64] int32 `Lev` of kda_prefill_chunked.cake: for i > j the level of the block
    inverse that joins rows i and j (the highest bit where they differ), −1 elsewhere. Built
    once per device: i32 tiles compare and select but have no arithmetic (`//`, `^`) yet."""
    lev = _levels.get(device)
    if lev is None:
        r = torch.arange(_CHUNK)
        high = torch.log2((r[:, None] ^ r[None, :]).clamp(min=1).double()).floor().int()
        lev = torch.where(r[:, None] > r[None, :], high, -1).to(torch.int32).to(device)
        _levels[device] = lev
    return lev


def _heads(x: torch.Tensor) -> torch.Tensor:
    """[B, T, H, D] -> a [B, H, T, D] view (strided: no copy)."""
    return x.permute(0, 2, 1, 3)


@dataclass(frozen=True)
class ChunkIO:
    """What both chunked-form kernels take and give besides the inputs: o [B, T, HV, 128]
    bf16, β as [B, HV, T] f32, and the initial and final states transposed (values × keys:
    the kernels keep Sᵀ) as [B·HV·128, 128] f32, `s0` being `final_t` (unread) when
    has_s0 = 0. Views of one batch's ChunkIO serve a part of it (kda_varlen.py)."""
    o: torch.Tensor
    beta_t: torch.Tensor
    s0: torch.Tensor
    final_t: torch.Tensor
    has_s0: int

    def final(self) -> torch.Tensor:
        """The final states [B, HV, 128, 128] (keys × values): one transposing copy."""
        return self.final_t.view(-1, self.o.shape[2], DIM, DIM).transpose(-1, -2).contiguous()


def _chunk_io(q, v, beta, initial_state) -> ChunkIO:
    """A ChunkIO of fresh buffers for inputs [B, T, ·]: one copy each of β and the initial
    state (transposed around the kernels)."""
    b, t, _, _ = q.shape
    hv = v.shape[2]
    o = torch.empty(b, t, hv, DIM, device=q.device, dtype=torch.bfloat16)
    beta_t = beta.float().transpose(1, 2).contiguous()
    final_t = torch.empty(b * hv * DIM, DIM, device=q.device, dtype=torch.float32)
    s0 = final_t if initial_state is None else (
        initial_state.float().transpose(-1, -2).contiguous().view(-1, DIM))
    return ChunkIO(o, beta_t, s0, final_t, int(initial_state is not None))


def _chunked(q, k, v, g, beta, initial_state, scale: float, target: str):
    """kda_prefill_chunked.cake on [B, H(V), T, 128] views of the inputs."""
    io = _chunk_io(q, v, beta, initial_state)
    chunked_into(q, k, v, g, io, scale, target)
    return io.o, io.final()


def chunked_into(q, k, v, g, io: ChunkIO, scale: float, target: str) -> None:
    """kda_prefill_chunked.cake into `io` (its o and final_t)."""
    b, t, h, _ = q.shape
    build.kernel("kda_prefill_chunked", target)(
        _heads(q), _heads(k), _heads(v), _heads(g), io.beta_t, _level_table(q.device), io.s0,
        io.final_t, _heads(io.o), b, t, v.shape[2], h, scale, io.has_s0)


def _split(q, k, v, g, beta, initial_state, scale: float, target: str):
    """kda_prefill_prep.cake over every chunk into a bf16 workspace (about 1 KiB per token
    and value head), then kda_prefill_state.cake's state pass, two CTAs per sequence, value
    head and sequence segment (state_segments: one segment unless SEGMENTED_STATE_PASS)."""
    b, t, _, _ = q.shape
    segments = state_segments(b, t, v.shape[2], sm_count(q.device)) if (
        SEGMENTED_STATE_PASS) else 1
    prep, state, result = split_launches(q, k, v, g, beta, initial_state, scale, target,
                                         segments=segments)
    prep()
    state()
    return result()


#: Whether kernel='kda_prefill_split' (and so the default from SPLIT_MIN_T) runs its state
#: pass in the segments state_segments picks, or as one segment per sequence. Off until a GPU
#: run times it faster (bench/kda.py prints the state pass in one segment and in P side by
#: side): the only run so far (H100, 2026-12-05) passed racecheck but ran out of time before
#: the segment tests and the bench rows.
SEGMENTED_STATE_PASS = False
#: state_segments' cost of one more segment, in chunk steps of the state pass (≈ 1.8 µs
#: each): the host's chaining matmul and launch.
SEGMENT_COST = 2
#: Segments shorter than this many chunks are not worth their launches and chaining.
SEGMENT_MIN_CHUNKS = 32


def state_segments(b: int, t: int, hv: int, sms: int) -> int:
    """How many sequence segments the split state pass runs in, by a model of its waves:
    one segment takes ⌈chunks⌉ chunk steps in ⌈2·B·HV / sms⌉ waves of CTAs (one CTA per SM:
    173 KiB of SMEM); P segments take ⌈chunks / P⌉ steps in the first launch's waves (2·B·HV
    CTAs for segment 0, 4·B·HV for each of the P − 2 middle ones) plus the second's
    (2·B·HV·(P − 1)), plus SEGMENT_COST a segment. Few heads and long sequences gain
    (1×32768×8: 9 segments); many heads keep one."""
    chunks, heads = -(-t // _CHUNK), b * hv

    def waves(ctas: int) -> int:
        return -(-ctas // sms)

    def cost(parts: int) -> int:
        if parts == 1:
            return chunks * waves(2 * heads)
        first = 2 * heads + 4 * heads * (parts - 2)
        return -(-chunks // parts) * (waves(first) + waves(2 * heads * (parts - 1))) + (
            SEGMENT_COST * (parts - 1))

    parts = min(range(1, max(1, chunks // SEGMENT_MIN_CHUNKS) + 1), key=cost)
    return -(-chunks // -(-chunks // parts))  # no empty segment


_sms: dict[torch.device, int] = {}


def sm_count(device: torch.device) -> int:
    if device not in _sms:
        _sms[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return _sms[device]


_bases: dict[torch.device, torch.Tensor] = {}


def _basis(device: torch.device) -> torch.Tensor:
    """[4, 64, 128] f32: two zero tiles and the 128 × 128 identity in two, the starts of a
    segment's column groups (C from zero, M from the identity) in the state pass."""
    basis = _bases.get(device)
    if basis is None:
        basis = torch.cat([torch.zeros(DIM, DIM), torch.eye(DIM)]).view(4, 64, DIM).to(device)
        _bases[device] = basis
    return basis


def split_launches(q, k, v, g, beta, initial_state, scale: float, target: str,
                   segments: int = 1):
    """kernel='kda_prefill_split' as its launches over one set of buffers: (prep, state,
    result), the kernels as closures (bench/kda.py times each alone) and `result()` the
    (o, final state) they leave once both ran. `segments` > 1 runs the state pass in that
    many sequence segments (kda_prefill_state.cake's header): `state` is then its two
    launches with the segments' starts chained between them."""
    io = _chunk_io(q, v, beta, initial_state)
    return split_launches_into(q, k, v, g, io, scale, target, segments=segments)


def split_launches_into(q, k, v, g, io: ChunkIO, scale: float, target: str,
                        segments: int = 1, dec: torch.Tensor | None = None):
    """split_launches on the buffers of `io`; `dec`, when given, is the per-chunk decay
    workspace WD ([B·HV·chunks, 128] f32: 2^(a chunk's log2 decay) per key channel, which
    kda_varlen.py reads back as its range check), else a fresh one."""
    b, t, h, _ = q.shape
    hv = v.shape[2]
    chunks = -(-t // _CHUNK)
    rows = _split_rows(b, t, hv)
    if rows >= 2**31:
        raise checks.CakeArgumentError(f"{_PREFILL}: kernel='kda_prefill_split' needs a "
                                       f"workspace of {rows} rows (B·HV·64·chunks), more than "
                                       "its 32-bit rows address; use the default kernel")
    seg = -(-chunks // max(1, min(segments, chunks)))
    parts = -(-chunks // seg)
    widths = (64, 64, DIM, DIM, DIM)                         # WA, WM, WW, WQ, WK
    flat = torch.empty(rows * sum(widths), device=q.device, dtype=torch.bfloat16)  # one alloc
    ends = [rows * sum(widths[:i + 1]) for i in range(len(widths))]
    ws = [flat[end - rows * w:end].view(rows, w) for w, end in zip(widths, ends)]
    if dec is None:
        dec = torch.empty(b * hv * chunks, DIM, device=q.device, dtype=torch.float32)  # WD
    o, beta_t, s0, final_t, has_s0 = io.o, io.beta_t, io.s0, io.final_t, io.has_s0
    views = (_heads(q), _heads(k), _heads(g), v.reshape(b, t, hv * DIM), _heads(o))

    def prep() -> None:
        build.kernel("kda_prefill_prep", target)(
            views[0], views[1], views[2], beta_t, _level_table(q.device), *ws, dec, b, t, hv,
            h, scale)

    def run(start, end, has, cols, tail, nseg, first, out_segs) -> None:
        build.kernel("kda_prefill_state", target)(
            views[3], *ws, dec, start, end, views[4], b, t, hv, has, cols, seg, tail, nseg,
            first, out_segs)

    if parts == 1:
        def state() -> None:
            run(s0, final_t, has_s0, 2, seg, 1, 0, 1)
        return prep, state, lambda: (o, io.final())
    heads = b * hv
    # first launch: per segment but the last, (C, M) transposed as 4 tiles of 64 rows a head
    start_a = _basis(q.device).repeat(parts - 1, heads, 1, 1, 1)
    end_a = torch.empty_like(start_a)
    # second launch: every segment but the first, from its start (values × keys)
    start_c = torch.empty(parts - 1, heads, DIM, DIM, device=q.device, dtype=torch.float32)
    end_c = torch.empty_like(start_c)

    def state() -> None:
        if has_s0:
            start_a[0, :, :2] = s0.view(heads, 2, 64, DIM)
        run(start_a.view(-1, DIM), end_a.view(-1, DIM), 1, 4, seg, parts - 1, 0, 1)
        ends = end_a.view(parts - 1, heads, 2, DIM, DIM)        # [·, ·, C | Mᵀ, 128, 128]
        start_c[0].copy_(ends[0, :, 0])
        for i in range(1, parts - 1):                           # Sᵀ ← Sᵀ·Mᵀ + Cᵀ
            torch.baddbmm(ends[i, :, 0], start_c[i - 1], ends[i, :, 1], out=start_c[i])
        run(start_c.view(-1, DIM), end_c.view(-1, DIM), 1, 2, chunks - (parts - 1) * seg,
            parts - 1, 1, parts)

    return prep, state, lambda: (o, end_c[-1].transpose(-1, -2).reshape(b, hv, DIM, DIM))


def _recurrent(q, k, v, g, beta, initial_state, scale: float, target: str,
               out: torch.Tensor | None = None):
    """kda_prefill_recurrent.cake; o into `out` (contiguous, like v) when given."""
    b, t, h, _ = q.shape
    hv = v.shape[2]
    q, k, v, g = (x.contiguous() for x in (q, k, v, g))
    beta = beta.float().contiguous()
    o = torch.empty_like(v) if out is None else out
    final = torch.empty(b, hv, DIM, DIM, device=q.device, dtype=torch.float32)
    s0 = final if initial_state is None else initial_state.contiguous()
    build.kernel("kda_prefill_recurrent", target)(
        q.view(-1, DIM), k.view(-1, DIM), v.view(-1, DIM), g.view(-1, DIM), beta.view(-1),
        s0.view(-1, DIM), final.view(-1, DIM), o.view(-1, DIM), b * hv, t, hv, h, scale,
        int(initial_state is not None))
    return o, final


#: The prefill kernels' entries by name.
_RUN = {"kda_prefill_chunked": _chunked, "kda_prefill_split": _split,
        "kda_prefill_recurrent": _recurrent}
