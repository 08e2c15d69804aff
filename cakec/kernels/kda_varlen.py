"""Variable-length KDA prefill (`cu_seqlens`) without padding every sequence to the longest.

The kernels address a batch as [B, T, ·] with one T, and a chunk of 64 tokens must not mix
two sequences, so a packed batch is run in groups (`plan_groups`, host logic only):

- the longest sequences (up to OWN_MAX, each of at least OWN_MIN_CHUNKS chunks) and any
  sequence left alone in its class run on views of the packed tensors: no copy in or out,
  o and the final state written in place, the initial state read in place;
- the others are padded per class of chunk count (1, 2–3, 4–7, … chunks: less than 2×
  padding) into one [n, t] batch each, gathered and scattered by index.

Each group takes the kernel its own (n, t) picks (cakec.kernels.kda.by_length) or the one
named, and the groups are spread over SLOTS streams of this module (longest processing time
first; the first, with the longest group, of high priority; the caller's stream waits for
them), so that the state passes of different sequences run side by side instead of one
after another. The chunked-form kernels' decay range is checked exactly as
for equal lengths, per sequence's own chunks: the split groups read the WD workspace their
prep kernel writes (2^(chunk log2-decay) per channel: > 0 means well inside the range), the
fused groups reduce their gates; only when that is inconclusive is g reduced per chunk again,
and a batch beyond the range is redone on the recurrent kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

#: At most this many of the longest sequences run alone on views of the packed inputs.
OWN_MAX = 8
#: ... each of at least this many 64-token chunks (shorter ones cost little to pad and copy).
OWN_MIN_CHUNKS = 8
#: Streams the groups are spread over (the caller's stream waits for them).
SLOTS = 4
_CHUNK = 64


@dataclass(frozen=True)
class Group:
    """Sequences run as one batch: `seqs` (indices into cu_seqlens, longest first) padded to
    `t` tokens (a lone sequence: its own length, on views), on stream `slot`."""
    seqs: tuple[int, ...]
    t: int
    slot: int


def chunks(tokens: int) -> int:
    return -(-tokens // _CHUNK)


def plan_groups(lengths: Sequence[int], *, own_max: int = OWN_MAX,
                own_min_chunks: int = OWN_MIN_CHUNKS, slots: int = SLOTS) -> tuple[Group, ...]:
    """The groups of a batch of sequence `lengths`, in launch order (most chunk steps
    first); empty sequences belong to none. Each group goes to the slot with the fewest chunk
    steps so far (a group's state pass is a chain of ⌈t / 64⌉ steps)."""
    order = sorted((i for i, n in enumerate(lengths) if n > 0), key=lambda i: -lengths[i])
    own = [i for i in order[:own_max] if chunks(lengths[i]) >= own_min_chunks]
    classes: dict[int, list[int]] = {}
    for i in order[len(own):]:  # `own` is a prefix of `order`: it is sorted
        classes.setdefault(chunks(lengths[i]).bit_length(), []).append(i)
    parts = [(i,) for i in own] + list(classes.values())
    parts.sort(key=lambda seqs: -lengths[seqs[0]])
    load = [0] * max(1, slots)
    groups = []
    for seqs in parts:
        t = lengths[seqs[0]]
        slot = min(range(len(load)), key=lambda s: (load[s], s))
        load[slot] += chunks(t)
        groups.append(Group(tuple(seqs), t, slot))
    return tuple(groups)


# ---- running a plan (torch from here on) ------------------------------------------------

_plans: dict[tuple, tuple] = {}
_PLAN_CACHE = 64
_side: dict = {}  # device -> the streams of _streams


def _plan(cu: tuple[int, ...], device) -> tuple:
    """(groups, per group None or its (tokens, slots, seqs) index tensors on `device`) for
    cu_seqlens `cu`, kept for the last _PLAN_CACHE batches (a served batch repeats rarely,
    a benchmark always)."""
    key = (cu, device)
    hit = _plans.get(key)
    if hit is not None:
        return hit
    groups = plan_groups([b - a for a, b in zip(cu, cu[1:])])
    index = [None if len(gr.seqs) == 1 else
             tuple(x.pin_memory().to(device, non_blocking=True) for x in _index(cu, gr))
             for gr in groups]
    if len(_plans) >= _PLAN_CACHE:
        del _plans[next(iter(_plans))]
    _plans[key] = (groups, index)
    return groups, index


def group_runs(cu: Sequence[int], gr: Group) -> list[tuple[int, int, int]]:
    """A padded group's tokens as runs (row in the packed batch, row in the group's [n, t]
    batch, length): one per sequence."""
    return [(cu[i], j * gr.t, cu[i + 1] - cu[i]) for j, i in enumerate(gr.seqs)]


def _index(cu: Sequence[int], gr: Group):
    """group_runs expanded to CPU int64 tensors: `tokens` (rows of the packed batch),
    `slots` (the same tokens' rows of the [n, t] batch), and `seqs`."""
    import torch

    packed, padded, lens = torch.tensor(group_runs(cu, gr)).unbind(1)
    pos = torch.arange(int(lens.sum())) - torch.repeat_interleave(lens.cumsum(0) - lens, lens)
    return (torch.repeat_interleave(packed, lens) + pos,
            torch.repeat_interleave(padded, lens) + pos, torch.tensor(gr.seqs))


def _streams(device, count: int) -> list:
    """`count` streams of this module's own: the first of high priority (slot 0 has the
    longest group, whose prep and state pass are the critical path: its CTAs go first)."""
    import torch

    pool = _side.setdefault(device, [])
    while len(pool) < count:
        pool.append(torch.cuda.Stream(device=device, priority=-1 if not pool else 0))
    return pool


def _padded(x, tokens, slots, n: int, t: int):
    """[1, T, ...] -> [n, t, ...]: the group's tokens at their slots, zeros elsewhere (a zero
    key and gate leave the state as it is; a zero β and v add nothing)."""
    out = x.new_zeros((n * t, *x.shape[2:]))
    out.index_copy_(0, slots, x[0].index_select(0, tokens))
    return out.view(n, t, *x.shape[2:])


def prefill_varlen(q, k, v, g, beta, initial_state, cu: list[int], scale: float,
                   target: str, kernel: str | None):
    """kda_prefill with cu_seqlens `cu` (checked), by groups: (o [1, T, HV, 128] bf16, the
    final states [N, HV, 128, 128] f32). `kernel` None: each group's default kernel, the
    decay range checked (and the batch redone on the recurrent kernel beyond it)."""
    import torch

    from cakec.kernels import kda_prefill_launch as kda

    groups, index = _plan(tuple(cu), q.device)
    n, hv, dim = len(cu) - 1, v.shape[2], kda.DIM
    picks = [kernel or kda.by_length(len(gr.seqs), gr.t, hv) for gr in groups]
    o = torch.empty_like(v)
    beta_t = beta.float().transpose(1, 2).contiguous()
    final_t = torch.empty(n * hv * dim, dim, device=q.device, dtype=torch.float32)
    s0 = final_t if initial_state is None else (
        initial_state.float().transpose(-1, -2).contiguous().view(-1, dim))
    for i in (i for i in range(n) if cu[i] == cu[i + 1]):  # empty: the state passes through
        rows = final_t[i * hv * dim:(i + 1) * hv * dim]
        if initial_state is None:
            rows.zero_()
        else:
            rows.copy_(s0[i * hv * dim:(i + 1) * hv * dim])
    io = kda.ChunkIO(o, beta_t, s0, final_t, int(initial_state is not None))
    split_rows = [len(gr.seqs) * hv * chunks(gr.t) if p == "kda_prefill_split" else 0
                  for gr, p in zip(groups, picks)]
    dec = torch.empty(sum(split_rows), dim, device=q.device, dtype=torch.float32) if any(
        split_rows) else None
    main = torch.cuda.current_stream(q.device)
    ready = torch.cuda.Event()
    ready.record(main)
    side = _streams(q.device, 1 + max(gr.slot for gr in groups))
    used: set[int] = set()
    lows = []  # the fused groups' lowest chunk decays (exact)
    at = 0
    for gr, pick, idx, rows in zip(groups, picks, index, split_rows):
        stream = side[gr.slot]
        if gr.slot not in used:
            stream.wait_event(ready)
            used.add(gr.slot)
        with torch.cuda.stream(stream):
            low = _run_group(q, k, v, g, beta, initial_state, io, cu, gr, idx, pick,
                             scale, target, None if dec is None else dec[at:at + rows])
        at += rows
        if low is not None and kernel is None:
            lows.append(low)
    for slot in used:
        done = torch.cuda.Event()
        done.record(side[slot])
        main.wait_event(done)
    if kernel is None and (dec is not None or lows):
        flags = [torch.stack(lows).amin() >= kda.CHUNK_DECAY_MIN] if lows else []
        if dec is not None:
            flags.append(dec.amin() > 0)  # 2^γ_C > 0: γ_C ≥ −126·ln 2, far inside the range
        in_range = kda.read_later(torch.stack(flags).all())
        if not in_range() and not _exact_in_range(g, cu, groups, picks):
            return prefill_varlen(q, k, v, g, beta, initial_state, cu, scale, target,
                                  "kda_prefill_recurrent")
    return o, io.final()


def _exact_in_range(g, cu, groups, picks) -> bool:
    """The decay check of every chunked-form group, per sequence's own chunks, waited for:
    what a zero WD left open (a chunk decaying by more than 126 ln 2 in some channel)."""
    from cakec.kernels import kda_prefill_launch as kda

    return all(kda.decay_in_range(g[:, cu[i]:cu[i + 1]])()
               for gr, p in zip(groups, picks) if p != "kda_prefill_recurrent"
               for i in gr.seqs)


def _run_group(q, k, v, g, beta, initial_state, io, cu, gr: Group, idx, pick: str,
               scale: float, target: str, dec):
    """Launch one group on the current stream; the lowest chunk decay (device scalar) for a
    fused-chunked group, else None."""
    from cakec.kernels import kda_prefill_launch as kda

    hv, dim = v.shape[2], kda.DIM
    if idx is None:  # one sequence: views of the packed batch, written in place
        i = gr.seqs[0]
        lo, hi = cu[i], cu[i + 1]
        xs = [x[:, lo:hi] for x in (q, k, v, g)]
        state = slice(i * hv * dim, (i + 1) * hv * dim)
        part = kda.ChunkIO(io.o[:, lo:hi], io.beta_t[:, :, lo:hi], io.s0[state],
                           io.final_t[state], io.has_s0)
        if pick == "kda_prefill_recurrent":
            init = None if initial_state is None else initial_state[i:i + 1]
            _, final = kda.recurrent(*xs, beta[:, lo:hi], init, scale, target,
                                      out=part.o)
            part.final_t.view(1, hv, dim, dim).copy_(final.transpose(-1, -2))
            return None
        return _run_chunk_form(xs, part, pick, scale, target, dec)
    tokens, slots, seqs = idx
    n, t = len(gr.seqs), gr.t
    xs = [_padded(x, tokens, slots, n, t) for x in (q, k, v, g)]
    beta_p = _padded(beta, tokens, slots, n, t)
    init = None if initial_state is None else initial_state.index_select(0, seqs)
    if pick == "kda_prefill_recurrent":
        o_p, final = kda.recurrent(*xs, beta_p, init, scale, target)
        final_t = final.transpose(-1, -2).reshape(n, hv * dim, dim)
        low = None
    else:
        part = kda.chunk_io(xs[0], xs[2], beta_p, init)
        low = _run_chunk_form(xs, part, pick, scale, target, dec)
        o_p, final_t = part.o, part.final_t.view(n, hv * dim, dim)
    io.o[0].index_copy_(0, tokens, o_p.view(n * t, hv, dim).index_select(0, slots))
    io.final_t.view(-1, hv * dim, dim).index_copy_(0, seqs, final_t)
    return low


def _run_chunk_form(xs, part, pick: str, scale: float, target: str, dec):
    from cakec.kernels import kda_prefill_launch as kda

    if pick == "kda_prefill_split":
        prep, state, _ = kda.split_launches_into(*xs, part, scale, target, dec=dec)
        prep()
        state()
        return None
    kda.chunked_into(*xs, part, scale, target)
    return kda.lowest_chunk_decay(xs[3])
