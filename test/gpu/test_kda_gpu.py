"""Kimi Delta Attention on an sm_90a GPU (issue 15): `cakec.kernels.kda_decode` against the
float32 recurrence of examples/kda/kda_decode.py (`reference_kda`), that reference against
fla's own `naive_recurrent_kda` (when fla is installed), and the entry's argument checks.
Outputs are NaN-poisoned before each launch, so an element never written fails. Skipped
without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_kda_gpu.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
#: Issue 15's acceptance: relative error of o ≤ 2e-2 (bf16 inputs), state ≤ 1e-2.
O_TOL, S_TOL = 2e-2, 1e-2

_module = None


def _example():
    global _module
    if _module is None:
        from cakec.api import load_example

        _module = load_example(str(EXAMPLES / "kda" / "kda_decode.cake"))
    return _module


def _rel(a, b) -> float:
    b = b.float()
    assert float(b.norm()) > 0, "a zero reference cannot fail"
    return float((a.float() - b).norm() / b.norm())


def _step(b: int, h: int, hv: int, seed: int) -> dict:
    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)
    return _example().decode_inputs(b, h, hv, "cuda", gen)


# From DECODE_RING_MIN_HEADS (2048) heads up the entry runs kda_decode_ring.cake: (256, 32, 32)
# and (16, 32, 128) (grouped value heads, G = 4) take it, the others kda_decode.cake.
@pytest.mark.parametrize("b,h,hv", [(1, 16, 16), (8, 32, 32), (64, 16, 16), (256, 32, 32),
                                    (3, 4, 16), (5, 2, 2), (16, 32, 128)])
@pytest.mark.parametrize("inplace", [False, True])
def test_decode_matches_reference(b, h, hv, inplace):
    from cakec.kernels.kda import kda_decode

    x = _step(b, h, hv, seed=b * 131 + hv + int(inplace))
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
    out = torch.full_like(x["v"], float("nan"))
    state_in = x["state"].clone()
    new = None if inplace else torch.full_like(state_in, float("nan"))
    o = kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], state_in, out=out, out_state=new)
    torch.cuda.synchronize()
    s = state_in if inplace else new
    assert o is out
    assert int(torch.isnan(o.float()).sum()) == 0 and int(torch.isnan(s).sum()) == 0
    assert _rel(o, ref_o) <= O_TOL
    assert _rel(s, ref_s) <= S_TOL
    if not inplace:
        assert torch.equal(state_in, x["state"]), "the input state was written"


@pytest.mark.parametrize("kernel", ["kda_decode", "kda_decode_wide", "kda_decode_ring"])
@pytest.mark.parametrize("b,h,hv", [(1, 1, 1), (3, 4, 16), (5, 2, 6), (37, 4, 8), (300, 2, 2)])
@pytest.mark.parametrize("inplace", [False, True])
def test_decode_kernel_matches_reference(kernel, b, h, hv, inplace, monkeypatch):
    """Every decode kernel the entry may route to, forced at ragged and small shapes (fewer
    items than CTAs, items not a multiple of the persistent grid, grouped value heads),
    against the float32 recurrence."""
    from cakec.kernels import kda

    monkeypatch.setattr(kda, "_decode_route", lambda heads: kernel)
    x = _step(b, h, hv, seed=b * 17 + hv + int(inplace))
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
    out = torch.full_like(x["v"], float("nan"))
    state_in = x["state"].clone()
    new = None if inplace else torch.full_like(state_in, float("nan"))
    kda.kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], state_in, out=out, out_state=new)
    torch.cuda.synchronize()
    s = state_in if inplace else new
    assert int(torch.isnan(out.float()).sum()) == 0 and int(torch.isnan(s).sum()) == 0
    assert _rel(out, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


def test_decode_steps_chain():
    """Eight steps in place, each against the reference run from the same state: errors do
    not compound (the state stays f32 throughout)."""
    from cakec.kernels.kda import kda_decode

    state = _step(4, 8, 16, seed=7)["state"]
    ref = state.clone()
    for t in range(8):
        x = _step(4, 8, 16, seed=100 + t)
        o = kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], state)
        ref_o, ref = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                              initial_state=ref)
        assert _rel(o, ref_o) <= O_TOL
    assert _rel(state, ref) <= S_TOL


def test_decode_bf16_beta_and_scale():
    from cakec.kernels.kda import kda_decode

    x = _step(2, 4, 8, seed=3)
    beta = x["beta"].to(torch.bfloat16)
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], beta, scale=0.5,
                                            initial_state=x["state"])
    state = x["state"].clone()
    o = kda_decode(x["q"], x["k"], x["v"], x["g"], beta, state, scale=0.5)
    assert _rel(o, ref_o) <= O_TOL and _rel(state, ref_s) <= S_TOL


def test_reference_matches_fla_naive():
    """Our float32 recurrence is fla's `naive_recurrent_kda` (what issue 15 checks against)."""
    naive = pytest.importorskip("fla.ops.kda.naive")
    gen = torch.Generator(device="cuda")
    gen.manual_seed(11)
    b, t, h, hv, d = 2, 37, 2, 4, 128
    import torch.nn.functional as F

    q = F.normalize(torch.randn(b, t, h, d, device="cuda", generator=gen), dim=-1)
    k = F.normalize(torch.randn(b, t, h, d, device="cuda", generator=gen), dim=-1)
    v = torch.randn(b, t, hv, d, device="cuda", generator=gen)
    g = -F.softplus(torch.randn(b, t, hv, d, device="cuda", generator=gen) - 2.0)
    beta = torch.sigmoid(torch.randn(b, t, hv, device="cuda", generator=gen))
    s0 = torch.randn(b, hv, d, d, device="cuda", generator=gen) * 0.1
    ours_o, ours_s = _example().reference_kda(q, k, v, g, beta, initial_state=s0)
    fla_o, fla_s = naive.naive_recurrent_kda(q, k, v, g, beta, initial_state=s0,
                                             output_final_state=True)
    assert _rel(ours_o, fla_o) < 1e-5 and _rel(ours_s, fla_s) < 1e-5


def test_decode_matches_fla_fused_recurrent():
    pytest.importorskip("fla.ops.kda")
    from cakec.kernels.kda import kda_decode

    module = _example()
    inputs = module.make_inputs({"B": 16, "H": 32, "HV": 32}, "cuda", seed=5)
    fla_o, fla_s = module.fla_decode(inputs)
    q, k, v, g, beta, s, _, _, bhv, hv, h, scale = inputs
    b = bhv // hv
    state = s.view(b, hv, 128, 128).clone()
    o = kda_decode(q.view(b, 1, h, 128), k.view(b, 1, h, 128), v.view(b, 1, hv, 128),
                   g.view(b, 1, hv, 128), beta.view(b, 1, hv), state, scale=scale)
    assert _rel(o, fla_o) <= O_TOL and _rel(state, fla_s) <= S_TOL


@pytest.mark.parametrize("change,message", [
    (lambda x: x.update(q=x["q"].float()), "q has dtype torch.float32"),
    (lambda x: x.update(q=x["q"].expand(2, 3, 4, 128)), "one token per sequence"),
    (lambda x: x.update(v=x["v"][..., :64]), "head dims must be 128"),
    (lambda x: x.update(q=x["q"][:, :, :3], k=x["k"][:, :, :3]),
     r"value heads \(8\) must be a multiple of query/key heads \(3\)"),
    (lambda x: x.update(g=x["g"][..., :64]), "g has shape"),
    (lambda x: x.update(state=x["state"].transpose(2, 3)), "state is not contiguous"),
    (lambda x: x.update(g=x["g"].transpose(0, 2)), "g has shape"),
    (lambda x: x.update(beta=x["beta"].to(torch.float16)), "beta must be a float32 or bfloat16"),
    (lambda x: x.update(state=x["state"].cpu()), "state is on cpu"),
])
def test_decode_refuses(change, message):
    from cakec.kernels.kda import kda_decode
    from cakec.runtime import CakeArgumentError

    x = _step(2, 4, 8, seed=1)
    change(x)
    with pytest.raises(CakeArgumentError, match=message):
        kda_decode(x["q"], x["k"], x["v"], x["g"], x["beta"], x["state"])


# ---- prefill ------------------------------------------------------------------------------


def _sequence(b: int, t: int, h: int, hv: int, seed: int, gate_shift: float = 2.0) -> dict:
    """Fresh [B, T, ·] inputs of the decode step's distributions, and an initial state;
    g = −softplus(N(0, 1) − gate_shift) (mean ≈ −0.13 a token at the default shift)."""
    import torch.nn.functional as F

    gen = torch.Generator(device="cuda")
    gen.manual_seed(seed)

    def randn(*shape):
        return torch.randn(*shape, device="cuda", generator=gen)

    return {"q": F.normalize(randn(b, t, h, 128), dim=-1).to(torch.bfloat16),
            "k": F.normalize(randn(b, t, h, 128), dim=-1).to(torch.bfloat16),
            "v": randn(b, t, hv, 128).to(torch.bfloat16),
            "g": -F.softplus(randn(b, t, hv, 128) - gate_shift),
            "beta": torch.sigmoid(randn(b, t, hv)),
            "state": randn(b, hv, 128, 128) * 0.1}


KERNELS = ("kda_prefill_chunked", "kda_prefill_split", "kda_prefill_recurrent")
#: The chunked-form kernels (scaled keys, the block inverse): the strong-gate and
#: correlated-key cases are about them.
CHUNKED = KERNELS[:2]


def test_every_prefill_kernel_is_tested():
    from cakec.kernels.kda import PREFILL_KERNELS

    assert set(PREFILL_KERNELS) == set(KERNELS)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("t", [1, 15, 63, 64, 65, 1000])
@pytest.mark.parametrize("with_state", [False, True])
def test_prefill_matches_reference(kernel, t, with_state):
    from cakec.kernels.kda import kda_prefill

    b, h, hv = (2, 2, 4) if t == 1000 else (3, 4, 8)
    x = _sequence(b, t, h, hv, seed=t * 3 + int(with_state))
    s0 = x["state"] if with_state else None
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=s0,
                       output_final_state=True, kernel=kernel)
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=s0)
    assert o.shape == x["v"].shape and o.dtype == torch.bfloat16
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("t", [1, 31, 32, 64, 65, 200])
def test_prefill_default_kernel(t):
    """Without `kernel=`, sequences shorter than CHUNKED_MIN_T run the recurrent kernel, up
    to SPLIT_MIN_T the fused chunked one and from there the split pair: the default's output
    is bit for bit that kernel's, and its pick is the one the thresholds name."""
    from cakec.kernels.kda import (CHUNKED_BY_DEFAULT, CHUNKED_MIN_T, SPLIT_MIN_T,
                                   default_kernel, kda_prefill)

    x = _sequence(2, t, 2, 4, seed=40 + t)
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    o, s = kda_prefill(*args, initial_state=x["state"], output_final_state=True)
    picked = ("kda_prefill_recurrent" if not CHUNKED_BY_DEFAULT or t < CHUNKED_MIN_T else
              "kda_prefill_chunked" if t < SPLIT_MIN_T else "kda_prefill_split")
    assert default_kernel(x["g"], 4) == picked
    other = "kda_prefill_chunked" if picked == "kda_prefill_recurrent" else "kda_prefill_recurrent"
    po, ps = kda_prefill(*args, initial_state=x["state"], output_final_state=True,
                         kernel=picked)
    oo, _ = kda_prefill(*args, initial_state=x["state"], output_final_state=True, kernel=other)
    assert torch.equal(o, po) and torch.equal(s, ps)
    assert not torch.equal(o, oo)  # the two kernels round differently: the pick is visible


@pytest.mark.parametrize("grouped", [True, False])
@pytest.mark.parametrize("kernel", KERNELS)
def test_prefill_varlen_matches_each_sequence(kernel, grouped, monkeypatch):
    """cu_seqlens: each sequence of the flattened batch against its own recurrence, in
    groups (the default) and padded to the longest (VARLEN_GROUPED off)."""
    from cakec.kernels import kda
    from cakec.kernels.kda import kda_prefill

    monkeypatch.setattr(kda, "VARLEN_GROUPED", grouped)

    lens = [37, 1, 200, 64]
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], device="cuda")
    x = _sequence(1, sum(lens), 2, 4, seed=9)
    s0 = torch.randn(len(lens), 4, 128, 128, device="cuda") * 0.1
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=s0,
                       cu_seqlens=cu, output_final_state=True, kernel=kernel)
    assert o.shape == x["v"].shape and s.shape == s0.shape
    for i, (lo, hi) in enumerate(zip(cu.tolist(), cu.tolist()[1:])):
        part = {n: x[n][:, lo:hi] for n in ("q", "k", "v", "g", "beta")}
        ref_o, ref_s = _example().reference_kda(**part, initial_state=s0[i:i + 1])
        assert _rel(o[:, lo:hi], ref_o) <= O_TOL and _rel(s[i:i + 1], ref_s) <= S_TOL


#: Ragged batches for the grouped varlen path (cakec/kernels/kda_varlen.py): sequences of
#: ≥ 8 chunks alone on views (700, 513, 1000), the rest padded per class of chunk count (1,
#: 2–3, 4–7 chunks), empty sequences, one sequence, many short ones, T % 64 ≠ 0 throughout.
VARLEN_BATCHES = {
    "mixed": [700, 0, 17, 1, 64, 65, 130, 129, 200, 513, 33, 0, 90],
    "one": [1000],
    "one_short": [40],
    "many_short": [int(n) for n in torch.randint(1, 300, (48,),
                                                 generator=torch.Generator().manual_seed(3))],
}


def _varlen(lens: list[int], h: int, hv: int, seed: int):
    """A packed batch of `lens` ([1, ΣT, ·] inputs), its cu_seqlens and initial states."""
    cu = torch.tensor([0, *torch.tensor(lens).cumsum(0).tolist()], device="cuda")
    x = _sequence(1, sum(lens), h, hv, seed=seed)
    x["state"] = torch.randn(len(lens), hv, 128, 128, device="cuda",
                             generator=torch.Generator(device="cuda").manual_seed(seed)) * 0.1
    return x, cu


def _varlen_reference(x, cu, s0):
    """The float32 recurrence of every sequence at once: each padded to the longest with
    zeros (a zero key, gate and β leave the state as it is)."""
    cu = cu.tolist()
    t = max(max(b - a for a, b in zip(cu, cu[1:])), 1)
    pad = {}
    for name in ("q", "k", "v", "g", "beta"):
        y = x[name].new_zeros((len(cu) - 1, t, *x[name].shape[2:]))
        for i, (a, b) in enumerate(zip(cu, cu[1:])):
            y[i, :b - a] = x[name][0, a:b]
        pad[name] = y
    o, s = _example().reference_kda(**pad, initial_state=s0)
    return torch.cat([o[i, :b - a] for i, (a, b) in enumerate(zip(cu, cu[1:]))])[None], s


@pytest.mark.parametrize("batch", sorted(VARLEN_BATCHES))
@pytest.mark.parametrize("kernel", [None, *KERNELS])
@pytest.mark.parametrize("with_state", [False, True])
def test_prefill_varlen_groups_match_reference(batch, kernel, with_state, monkeypatch):
    """The grouped varlen path at ragged cu_seqlens, by default and with each kernel named,
    against the float32 recurrence of each sequence (o of every token, every final state,
    an empty sequence's being its initial one)."""
    from cakec.kernels import kda
    from cakec.kernels.kda import kda_prefill

    monkeypatch.setattr(kda, "VARLEN_GROUPED", True)
    lens = VARLEN_BATCHES[batch]
    x, cu = _varlen(lens, 2, 4, seed=60 + len(lens))
    s0 = x["state"] if with_state else None
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=s0,
                       cu_seqlens=cu, output_final_state=True, kernel=kernel)
    ref_o, ref_s = _varlen_reference(x, cu, s0)
    assert o.shape == x["v"].shape and s.shape == (len(lens), 4, 128, 128)
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL
    for i, (a, b) in enumerate(zip(cu.tolist(), cu.tolist()[1:])):  # no sequence hides
        if b > a:
            assert _rel(o[:, a:b], ref_o[:, a:b]) <= O_TOL
        assert _rel(s[i], ref_s[i]) <= S_TOL if (b > a or with_state) else (
            not s[i].any())


def test_prefill_varlen_alone_is_the_sequence_alone(monkeypatch):
    """A sequence run alone (on views of the packed batch, written in place) gives bit for
    bit what the same kernel gives for that sequence as its own batch; int32 cu_seqlens."""
    from cakec.kernels import kda
    from cakec.kernels.kda import kda_prefill

    monkeypatch.setattr(kda, "VARLEN_GROUPED", True)
    lens = [900, 5, 700, 64]
    x, cu = _varlen(lens, 2, 4, seed=71)
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    o, s = kda_prefill(*args, initial_state=x["state"], cu_seqlens=cu.int(),
                       output_final_state=True)
    for i in (0, 2):
        a, b = cu[i].item(), cu[i + 1].item()
        po, ps = kda_prefill(*(y[:, a:b] for y in args), initial_state=x["state"][i:i + 1],
                             output_final_state=True, kernel="kda_prefill_split")
        assert torch.equal(o[:, a:b], po) and torch.equal(s[i:i + 1], ps)


@pytest.mark.parametrize("gate,redone", [(-3.0, True), (-1.8, False)])
def test_prefill_varlen_decay_range(gate, redone, monkeypatch):
    """Gates beyond the chunked form's range in one sequence (64 × −3 < CHUNK_DECAY_MIN)
    redo the batch on the recurrent kernel (bit for bit); gates whose chunk decay underflows
    WD (64 × −1.8 ≈ −115 < −126 ln 2) but stays within CHUNK_DECAY_MIN keep the chunked
    form, found by the exact second check."""
    from cakec.kernels import kda
    from cakec.kernels.kda import CHUNK_DECAY_MIN, kda_prefill

    monkeypatch.setattr(kda, "VARLEN_GROUPED", True)
    lens = [600, 130, 20, 90]
    x, cu = _varlen(lens, 2, 2, seed=80)
    x["g"][:, 600:730] = gate                              # the second sequence only
    assert (64 * gate < CHUNK_DECAY_MIN) == redone and 64 * gate < -126 * 0.6931
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    kw = {"initial_state": x["state"], "cu_seqlens": cu, "output_final_state": True}
    o, s = kda_prefill(*args, **kw)
    ro, rs = kda_prefill(*args, **kw, kernel="kda_prefill_recurrent")
    assert (torch.equal(o, ro) and torch.equal(s, rs)) == redone
    ref_o, ref_s = _varlen_reference(x, cu, x["state"])
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("kernel", KERNELS)
def test_prefill_matches_fla_chunk_kda(kernel):
    chunk = pytest.importorskip("fla.ops.kda")
    from cakec.kernels.kda import kda_prefill

    x = _sequence(2, 300, 4, 4, seed=21)
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["state"],
                       output_final_state=True, kernel=kernel)
    fla_o, fla_s = chunk.chunk_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                   initial_state=x["state"], output_final_state=True)
    assert _rel(o, fla_o) <= O_TOL and _rel(s, fla_s) <= S_TOL


@pytest.mark.parametrize("kernel", CHUNKED)
@pytest.mark.parametrize("t", [15, 200])
def test_prefill_chunked_matches_fla_naive(t, kernel):
    """The chunked-form kernels against fla's own float32 recurrence (not only ours)."""
    naive = pytest.importorskip("fla.ops.kda.naive")
    from cakec.kernels.kda import kda_prefill

    x = _sequence(1, t, 2, 2, seed=31 + t)
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["state"],
                       output_final_state=True, kernel=kernel)
    ref_o, ref_s = naive.naive_recurrent_kda(
        x["q"].float(), x["k"].float(), x["v"].float(), x["g"].float(), x["beta"].float(),
        initial_state=x["state"].clone(), output_final_state=True)
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("kernel", CHUNKED)
def test_prefill_strong_gates(kernel):
    """Decays far below fla's range (γ of a chunk down to about −40 natural-log units per
    channel): the chunked form's 2^(±(γ − γ_C/2)) factors stay finite."""
    from cakec.kernels.kda import kda_prefill

    x = _sequence(1, 256, 2, 2, seed=5)
    x["g"] = x["g"] * 4.0 - 0.3
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["state"],
                       output_final_state=True, kernel=kernel)
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


def test_prefill_gates_beyond_the_chunk_range():
    """A chunk decaying by more than CHUNK_DECAY_MIN in some channel would overflow the
    chunked form's scaled keys: kda_prefill's speculative split launch is redone by the
    recurrent kernel (its result bit for bit), exact as ever."""
    from cakec.kernels.kda import CHUNK_DECAY_MIN, default_kernel, kda_prefill

    x = _sequence(1, 130, 2, 2, seed=8)
    x["g"] = x["g"] * 30.0
    assert float(x["g"][:, :64].sum(dim=1).amin()) < CHUNK_DECAY_MIN
    assert default_kernel(x["g"], 2) == "kda_prefill_recurrent"
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    o, s = kda_prefill(*args, initial_state=x["state"], output_final_state=True)
    ro, rs = kda_prefill(*args, initial_state=x["state"], output_final_state=True,
                         kernel="kda_prefill_recurrent")
    assert torch.equal(o, ro) and torch.equal(s, rs)
    ref_o, ref_s = _example().reference_kda(*args, initial_state=x["state"])
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("kernel", CHUNKED)
def test_prefill_correlated_keys(kernel):
    """Nearly equal keys (a repeated token): L is dense, the block inverse must stay exact."""
    from cakec.kernels.kda import kda_prefill

    x = _sequence(2, 200, 2, 2, seed=12)
    k = x["k"].float()
    x["k"] = torch.nn.functional.normalize(0.1 * k + 0.9 * k[:, :1], dim=-1).to(torch.bfloat16)
    o, s = kda_prefill(x["q"], x["k"], x["v"], x["g"], x["beta"], initial_state=x["state"],
                       output_final_state=True, kernel=kernel)
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=x["state"])
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("t,with_state", [(1, False), (65, True), (1000, True)])
def test_prefill_split_prep_3cta(t, with_state, monkeypatch):
    """kda_prefill_prep_3cta.cake (`sx` reusing the dead `skn`'s bytes, 72 KiB of SMEM) in
    place of the shipped prep (kda_prefill_launch.PREP_3CTA): three CTAs fit an SM, and the
    split prefill matches the float32 reference and, the math being the same instructions,
    the shipped prep's result bit for bit."""
    from cakec.kernels import build, kda_prefill_launch
    from cakec.kernels.kda import kda_prefill

    b, h, hv = (2, 2, 4) if t == 1000 else (3, 4, 8)
    x = _sequence(b, t, h, hv, seed=70 + t)
    s0 = x["state"] if with_state else None
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    base_o, base_s = kda_prefill(*args, initial_state=s0, output_final_state=True,
                                 kernel="kda_prefill_split")
    monkeypatch.setattr(kda_prefill_launch, "PREP_3CTA", True)
    o, s = kda_prefill(*args, initial_state=s0, output_final_state=True,
                       kernel="kda_prefill_split")
    facts = build.kernel("kda_prefill_prep_3cta", "sm_90a").device_facts()
    assert facts["max_clusters"] == 3 * facts["sm_count"]
    ref_o, ref_s = _example().reference_kda(*args, initial_state=s0)
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL
    assert torch.equal(o, base_o) and torch.equal(s, base_s)


@pytest.mark.parametrize("segments,t,with_state", [(2, 1000, False), (3, 1000, True),
                                                    (5, 300, True), (3, 130, False),
                                                    (4, 200, True)])
def test_kda_prefill_split_state_in_segments(segments, t, with_state):
    """The split state pass in sequence segments (kda_prefill_state.cake's header): every
    segment's C and M side by side, the starts chained on the host, then every segment but
    the first from its start, a ragged last chunk included; against the float32 recurrence.
    Two segments chain nothing (the second starts from the first's end state), so they give
    the one-segment pass bit for bit; from three, a start is M·S + C, rounded elsewhere.
    The gates decay slowly (≈ −0.004 a token): at the default's ≈ −0.13 a segment of six
    chunks forgets its start below f32 rounding, so a wrong chained start would go unseen
    (and the chained result came out bit for bit the one-segment one, H200 2026-12-05)."""
    from cakec.kernels import checks
    from cakec.kernels.kda import split_launches

    x = _sequence(2, t, 2, 4, seed=50 + t + segments, gate_shift=6.0)
    s0 = x["state"] if with_state else None
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"], s0, 128 ** -0.5,
            checks.target("test", x["q"]))
    outs = []
    for n in (1, segments):
        prep, state, result = split_launches(*args, segments=n)
        prep()
        state()
        outs.append(result())
    ref_o, ref_s = _example().reference_kda(x["q"], x["k"], x["v"], x["g"], x["beta"],
                                            initial_state=s0)
    (o1, s1), (o, s) = outs
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL
    assert (torch.equal(o, o1) and torch.equal(s, s1)) == (segments == 2)


def test_kda_prefill_split_picks_segments_for_few_heads(monkeypatch):
    """kda_prefill's split pair at 1×8192×2 (2 heads, 128 chunks): state_segments picks 4
    segments there on any GPU of 20 SMs or more (one at many heads; on 132 SMs 9 at
    1×32768×8, 5 at 1×16384×8), the entry runs them when entry_segments says so (bit for bit
    those launches: here with the floor of SEGMENTED_FROM_CHUNKS lowered, which by default
    keeps 128 chunks in one segment) and matches the float32 recurrence."""
    from cakec.kernels import checks, kda_prefill_launch
    from cakec.kernels.kda import (entry_segments, kda_prefill, sm_count, split_launches,
                                   state_segments)

    x = _sequence(1, 8192, 2, 2, seed=77)
    sms = sm_count(x["q"].device)
    assert state_segments(1, 8192, 2, sms) == 4
    assert entry_segments(1, 8192, 2, sms) == 1  # below the default floor
    monkeypatch.setattr(kda_prefill_launch, "SEGMENTED_FROM_CHUNKS", 128)
    segments = entry_segments(1, 8192, 2, sms)
    assert segments == (4 if kda_prefill_launch.SEGMENTED_STATE_PASS else 1)
    assert state_segments(8, 2048, 16, 132) == 1 and state_segments(1, 32768, 8, 132) == 9
    # the H100 sweep's best or near it (kda_prefill_launch.SEGMENT_COST): not P = 8 there
    assert state_segments(1, 16384, 8, 132) == 5 and state_segments(1, 65536, 4, 132) == 9
    args = (x["q"], x["k"], x["v"], x["g"], x["beta"])
    o, s = kda_prefill(*args, initial_state=x["state"], output_final_state=True)
    prep, state, result = split_launches(*args, x["state"], 128 ** -0.5,
                                         checks.target("test", x["q"]),
                                         segments=segments)
    prep()
    state()
    po, ps = result()
    assert torch.equal(o, po) and torch.equal(s, ps)
    ref_o, ref_s = _example().reference_kda(*args, initial_state=x["state"])
    assert _rel(o, ref_o) <= O_TOL and _rel(s, ref_s) <= S_TOL


@pytest.mark.parametrize("change,message", [
    (lambda x: x.update(g=x["g"].to(torch.bfloat16)), "g has dtype torch.bfloat16"),
    (lambda x: x.update(v=x["v"][:, :, :3], g=x["g"][:, :, :3], beta=x["beta"][:, :, :3]),
     r"value heads \(3\) must be a multiple of query/key heads \(2\)"),
    (lambda x: x.update(beta=x["beta"][:, :5]), "beta has shape"),
    (lambda x: x.update(cu_seqlens=torch.tensor([0, 5, 4, 8], device="cuda")),
     "cu_seqlens must rise from 0 to T = 8"),
    (lambda x: x.update(cu_seqlens=torch.tensor([0.0, 8.0], device="cuda")),
     "cu_seqlens must be a 1-D int32/int64"),
    (lambda x: x.update(initial_state=torch.zeros(1, 4, 128, 128, device="cuda")),
     "initial_state has shape"),
])
def test_prefill_refuses(change, message):
    from cakec.kernels.kda import kda_prefill
    from cakec.runtime import CakeArgumentError

    x = _sequence(1, 8, 2, 4, seed=1)
    x = {"q": x["q"], "k": x["k"], "v": x["v"], "g": x["g"], "beta": x["beta"],
         "initial_state": None, "cu_seqlens": None}
    change(x)
    if x["cu_seqlens"] is None and x["initial_state"] is not None:
        x["cu_seqlens"] = torch.tensor([0, 3, 8], device="cuda")  # 2 sequences, not 1
    with pytest.raises(CakeArgumentError, match=message):
        kda_prefill(**x)
