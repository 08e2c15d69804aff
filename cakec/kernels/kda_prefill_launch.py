"""The KDA prefill kernels' launch layer: which kernel a batch of B sequences of T tokens
runs (by length and gate range), the chunked-form buffers (`ChunkIO`) and the launches of each
kernel (kda_prefill_chunked.cake, the kda_prefill_prep.cake + kda_prefill_state.cake pair,
kda_prefill_recurrent.cake). kda.py's `kda_prefill` checks the arguments and calls these;
kda_varlen.py runs groups of a variable-length batch on them.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from cakec.kernels import build, checks

#: The key and value head dimension the kernels are written for.
DIM = 128
#: The public entry these launches serve, as argument errors name it.
_PREFILL = "cakec.kernels.kda_prefill"


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


def default_kernel(g: torch.Tensor, hv: int) -> str:
    """kda_prefill's pick for gates g [B, T, HV, 128] (after varlen padding): by T
    (CHUNKED_MIN_T, SPLIT_MIN_T), the chunked-form kernels only while every chunk's decay
    stays above CHUNK_DECAY_MIN (this asks the device and waits), the split one only while
    its workspace rows fit 32 bits."""
    pick = by_length(g.shape[0], g.shape[1], hv)
    if pick != "kda_prefill_recurrent" and not decay_in_range(g)():
        return "kda_prefill_recurrent"
    return pick


def by_length(b: int, t: int, hv: int) -> str:
    """The default kernel for B sequences of T tokens and HV value heads, the gates aside."""
    if not CHUNKED_BY_DEFAULT or t < CHUNKED_MIN_T:
        return "kda_prefill_recurrent"
    if t >= SPLIT_MIN_T and _split_rows(b, t, hv) < 2**31:
        return "kda_prefill_split"
    return "kda_prefill_chunked"


def _split_rows(b: int, t: int, hv: int) -> int:
    """Rows of kda_prefill_split's workspace: 64 per chunk, value head and sequence."""
    return b * hv * -(-t // _CHUNK) * _CHUNK


def decay_in_range(g: torch.Tensor):
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


def chunk_io(q, v, beta, initial_state) -> ChunkIO:
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
    io = chunk_io(q, v, beta, initial_state)
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
    head and sequence segment (entry_segments)."""
    b, t, _, _ = q.shape
    segments = entry_segments(b, t, v.shape[2], sm_count(q.device))
    prep, state, result = split_launches(q, k, v, g, beta, initial_state, scale, target,
                                         segments=segments)
    prep()
    state()
    return result()


#: Whether kernel='kda_prefill_split' (and so the default from SPLIT_MIN_T) runs its state
#: pass in the segments state_segments picks for sequences of at least SEGMENTED_FROM_CHUNKS
#: chunks, or as one segment per sequence. H100 80GB HBM3, 2026-12-06, `bench/kda_segments.py`
#: (the entry with the switch off and on in the same interleaved rounds, CUDA-event medians;
#: every result equal to the one-segment entry's): 1x32768x8 (512 chunks, P = 9) 1.409 →
#: 0.941 ms (1.50×), 1x16384x8 (256 chunks, P = 5) 0.736 → 0.651 (1.13×), but 1x8192x16 and
#: 2x8192x8 (128 chunks, P = 3) 0.491 → 0.528 and 0.486 → 0.520 (0.93×): there the segmented
#: call's host work (0.47 ms a call against 0.16, its chain of small launches and matmuls)
#: is no longer hidden behind 0.46 ms of kernels, though the pair alone gains (0.459 ms).
SEGMENTED_STATE_PASS = True
#: The shortest sequence, in chunks, whose state pass is segmented (see SEGMENTED_STATE_PASS:
#: a gain measured at 256 and 512 chunks, a loss at 128).
SEGMENTED_FROM_CHUNKS = 256
#: Whether kernel='kda_prefill_split' runs its prep as kda_prefill_prep_3cta.cake (the same
#: math in 72 KiB of SMEM, `sx` reusing the dead `skn`'s bytes, three CTAs an SM at 168
#: registers, ptxas spilling a little) instead of kda_prefill_prep.cake (80 KiB, two CTAs of
#: 255 registers). The prep is latency-bound with two warps per scheduler (docs/kernels.md,
#: "Where the prep's instructions go"): a third CTA is the lever left. Off until a GPU run
#: times it faster (bench/kda_prep_ab.py, both files in the same interleaved rounds). H100
#: 80GB HBM3, 2026-12-06, `bench/kda_prep_ab.py --no-fla` (bit for bit the shipped prep's
#: results): the prep alone 0.260 → 0.335 ms at 1x8192x16, 0.483 → 0.629 at 1x32768x8, 0.915
#: → 1.225 at 4x4096x32 (0.74–0.78×): the spills of a 168-register budget cost more than a
#: third CTA an SM gains, so it stays off.
PREP_3CTA = False
#: state_segments' cost of one more segment, in chunk steps of the state pass (≈ 1.75 µs
#: each): the chain's f32 matmul and the extra CTAs (not measured apart). A least-squares fit
#: of the wave model to the H100 sweep of the state pass alone (38 points, 4–32 heads,
#: 128–1024 chunks, P = 1–16; docs/kernels.md) gives 1.74 µs a step and 20 µs a segment
#: (≈ 11 steps, RMS error 6 %); the value before, 2, made the model pick P = 8 at 1x16384x8
#: (0.308 ms, against P = 4's 0.272). 8, not 11: at 11 the pick at 1x32768x8 moves from 9
#: (the sweep's best there) to 5, which the sweep did not measure; at 8 it stays, and
#: 1x65536x4 takes 9 (its best, 0.491 ms) instead of 17 (P = 16 took 0.637).
SEGMENT_COST = 8
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


def entry_segments(b: int, t: int, hv: int, sms: int) -> int:
    """The segments kda_prefill's split path runs its state pass in: state_segments' pick
    while SEGMENTED_STATE_PASS is on and a sequence has SEGMENTED_FROM_CHUNKS chunks or more,
    else one."""
    if not SEGMENTED_STATE_PASS or -(-t // _CHUNK) < SEGMENTED_FROM_CHUNKS:
        return 1
    return state_segments(b, t, hv, sms)


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
    io = chunk_io(q, v, beta, initial_state)
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
        build.kernel("kda_prefill_prep_3cta" if PREP_3CTA else "kda_prefill_prep", target)(
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


def recurrent(q, k, v, g, beta, initial_state, scale: float, target: str,
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
RUNS = {"kda_prefill_chunked": _chunked, "kda_prefill_split": _split,
        "kda_prefill_recurrent": recurrent}
