"""examples/attention/fmha_fwd_sm90.cake on an sm_90a GPU, through `fmha` in its sibling .py:
O and lse against the float32 reference at ragged shapes (S = 1, 77, 1000, 4097; S_q ≠ S_k
both ways; causal on and off; GQA; D = 64 and 128), fully masked rows (causal with
S_q > S_k) giving O = 0 and lse = −inf rather than NaN, nothing written outside O and lse,
and the argument checks; the head-dim-128 shapes also through fmha_fwd_sm90_overlap.cake (the
schedule with its epilogue under the next tile's MMAs) while `fmha` does not run it by
default. Skipped without torch or an sm_90 GPU.

    pytest -m gpu test/gpu/test_fmha_gpu.py
"""

from __future__ import annotations

from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

ROOT = Path(__file__).resolve().parents[2]
MAX_ABS, MAX_REL, MAX_LSE = 2e-2, 1e-2, 1e-3

# B, S_q, S_k, H, H_kv, D, causal.
SHAPES = [
    (1, 1, 1, 1, 1, 128, False),          # one query, one key
    (1, 1, 1, 1, 1, 64, True),
    (2, 77, 77, 3, 3, 128, True),         # below one tile
    (2, 77, 77, 4, 2, 64, False),         # GQA below one tile
    (1, 1000, 1000, 4, 4, 128, False),    # ragged tail on both
    (1, 1000, 1000, 4, 1, 128, True),     # causal MQA with a tail
    (1, 4097, 4097, 2, 2, 128, True),     # one past a multiple of every tile
    (1, 4097, 4097, 8, 2, 64, False),
    (2, 128, 1000, 2, 2, 128, True),      # S_q < S_k: bottom-right causal (a prefill chunk)
    (1, 1, 4097, 4, 2, 128, True),        # decode: one query sees the whole cache
    (1, 1000, 300, 2, 2, 64, True),       # S_q > S_k: the first 700 rows see no key
    (1, 300, 77, 2, 1, 128, False),       # S_q > S_k, non-causal
    (3, 256, 256, 4, 4, 128, True),       # whole tiles, several batches
    # more tiles than SMs: each CTA stores a tile's O under the next tile's S_0, in rounds
    # of alternating direction (a ragged last round), and its last tile after the loop
    (3, 1000, 1000, 16, 4, 128, False),
    (2, 2047, 2047, 16, 16, 128, True),
    (4, 1024, 1024, 32, 32, 64, False),
]


@pytest.fixture(scope="module")
def ex():
    from cakec.api import load_example

    return load_example(ROOT / "examples" / "attention" / "fmha_fwd_sm90.cake")


def _cases() -> list:
    """(shape, kernel file or None for `fmha`'s own): every shape, and the head-dim-128 ones
    through the overlapped schedule too."""
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("fmha_example", ROOT / "examples" / "attention" /
                                   "fmha_fwd_sm90.py")
    mod = module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    extra = [] if mod.OVERLAP_BY_DEFAULT else [(s, mod.OVERLAP) for s in SHAPES if s[5] == 128]
    return [(s, None) for s in SHAPES] + extra


@pytest.mark.parametrize("shape,variant", _cases(), ids=lambda v: str(v))
def test_matches_f32_reference(ex, shape, variant):
    b, s_q, s_k, h, h_kv, d, causal = shape
    gen = torch.Generator(device="cuda").manual_seed(s_q * 7919 + s_k * 31 + h * 7 + d)
    q = torch.randn(b, s_q, h, d, device="cuda", generator=gen).to(torch.bfloat16)
    k = torch.randn(b, s_k, h_kv, d, device="cuda", generator=gen).to(torch.bfloat16)
    v = torch.randn(b, s_k, h_kv, d, device="cuda", generator=gen).to(torch.bfloat16)
    o, lse = ex.launch(variant and ex.compiled(variant), q, k, v, causal=causal)
    torch.cuda.synchronize()
    ref_o, ref_lse = ex.reference_fmha(q, k, v, causal=causal)
    of = o.float()
    assert not torch.isnan(of).any() and not torch.isnan(lse).any()
    assert float((of - ref_o).abs().max()) <= MAX_ABS
    norm = float(ref_o.norm())
    assert float((of - ref_o).norm()) <= MAX_REL * max(norm, 1.0)
    seen = torch.isfinite(ref_lse)
    assert torch.equal(torch.isfinite(lse), seen)
    if bool(seen.any()):
        assert float((lse - ref_lse)[seen].abs().max()) <= MAX_LSE
    assert bool((lse[~seen] == float("-inf")).all())
    if causal and s_q > s_k:  # rows that see no key: exactly zero
        assert bool((o[:, :s_q - s_k] == 0).all())


def test_scale_and_non_contiguous_inputs(ex):
    """q, k, v as the [B, H, S, D] → [B, S, H, D] transposes SDPA users hold, and a scale."""
    b, s, h, d = 2, 300, 4, 128
    q, k, v = (torch.randn(b, h, s, d, device="cuda").to(torch.bfloat16).transpose(1, 2)
               for _ in range(3))
    o, lse = ex.fmha(q, k, v, causal=False, scale=0.3)
    ref_o, ref_lse = ex.reference_fmha(q, k, v, causal=False, scale=0.3)
    assert float((o.float() - ref_o).abs().max()) <= MAX_ABS
    assert float((lse - ref_lse).abs().max()) <= MAX_LSE


@pytest.mark.parametrize("d,name", [(64, None), (128, None), (128, "overlap")])
def test_no_write_outside_outputs(ex, d, name):
    """lse rows stop at S_q (bounds-checked), O rows at its padded buffer's end (the
    overlapped schedule's first epilogue aims its empty copy past both ends)."""
    b, s, h = 2, 77, 2
    q, k, v = (torch.randn(b, s, h, d, device="cuda").to(torch.bfloat16) for _ in range(3))
    rows = b * ex.padded(s)
    obuf = torch.full((rows + 64, h * d), 7.0, device="cuda", dtype=torch.bfloat16)
    lbuf = torch.full((b * h, s + 64), 7.0, device="cuda", dtype=torch.float32)
    run = ex.compiled(ex.OVERLAP) if name else ex.kernel(d)
    run(ex._rows(q), ex._rows(k), ex._rows(v), obuf[:rows], lbuf[:, :s],
        b, s, s, h, 1, ex.LOG2E / d ** 0.5, 0)
    torch.cuda.synchronize()
    assert bool((obuf[rows:] == 7.0).all())
    assert bool((lbuf[:, s:] == 7.0).all())
    ref_o, _ = ex.reference_fmha(q, k, v)
    got = obuf[:rows].view(b, ex.padded(s), h, d)[:, :s].float()
    assert float((got - ref_o).abs().max()) <= MAX_ABS


@pytest.mark.parametrize("bad,match", [
    (lambda q, k, v: (q.float(), k, v), "bfloat16"),
    (lambda q, k, v: (q[0], k, v), r"\[B, S, H, D\]"),
    (lambda q, k, v: (q[..., :32], k[..., :32], v[..., :32]), "head dim 32"),
    (lambda q, k, v: (q, k, v[:, :5]), "same shape"),
    (lambda q, k, v: (q[:, :, :3], k, v), "multiple of KV heads"),
    (lambda q, k, v: (q[:, :0], k, v), "empty"),
    (lambda q, k, v: (q, k.cpu(), v.cpu()), "CUDA"),
])
def test_refuses_unsupported_input(ex, bad, match):
    q = torch.randn(1, 8, 4, 64, device="cuda").to(torch.bfloat16)
    k = torch.randn(1, 8, 2, 64, device="cuda").to(torch.bfloat16)
    with pytest.raises(ValueError, match=match):
        ex.fmha(*bad(q, k, k.clone()))
    with pytest.raises(ValueError, match="scale"):
        ex.fmha(q, k, k, scale=float("nan"))
