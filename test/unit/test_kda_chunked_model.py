"""The chunked KDA prefill's algorithm (examples/kda/kda_prefill_chunked_model.py: what
cakec/kernels/kda_prefill_chunked.cake computes, roundings included) against the token-by-token
recurrence, in float64 on the CPU: within issue 15's tolerances (o 2e-2, state 1e-2) for ragged
lengths, with and without an initial state, and for decays far stronger than fla's range."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "examples" / "kda" / "kda_prefill_chunked_model.py"
_spec = importlib.util.spec_from_file_location("kda_prefill_chunked_model", _PATH)
model = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(model)  # type: ignore[union-attr]


def _inputs(t: int, seed: int, gate_scale: float = 1.0):
    rng = np.random.default_rng(seed)

    def unit(x):
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    q = model.bf16(unit(rng.standard_normal((t, 128))))
    k = model.bf16(unit(rng.standard_normal((t, 128))))
    v = model.bf16(rng.standard_normal((t, 128)))
    g = model.f32(-np.logaddexp(0.0, rng.standard_normal((t, 128)) - 2.0) * gate_scale)
    beta = model.f32(1.0 / (1.0 + np.exp(-rng.standard_normal(t))))
    return q, k, v, g, beta


def _rel(a, b) -> float:
    assert np.linalg.norm(b) > 0
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.mark.parametrize("t", [1, 15, 63, 64, 65, 200])
@pytest.mark.parametrize("with_state", [False, True])
def test_chunked_matches_recurrence(t, with_state):
    q, k, v, g, beta = _inputs(t, seed=t + 100 * with_state)
    s0 = (np.random.default_rng(t).standard_normal((128, 128)) * 0.1 if with_state
          else np.zeros((128, 128)))
    ro, rs = model.recurrent(q, k, v, g, beta, 128 ** -0.5, s0)
    co, cs = model.chunked(q, k, v, g, beta, 128 ** -0.5, s0)
    assert _rel(co, ro) <= 1e-2 and _rel(cs, rs) <= 5e-3


def test_correlated_keys():
    """Nearly equal keys (a repeated token) make L dense with entries near β: the block
    inverse stays exact to bf16 rounding (a doubling product over 64 rows fails here)."""
    q, k, v, g, beta = _inputs(64, seed=3)
    k = model.bf16(0.1 * k + 0.9 * k[:1])
    k = model.bf16(k / np.linalg.norm(k, axis=-1, keepdims=True))
    ro, rs = model.recurrent(q, k, v, g, beta, 128 ** -0.5, np.zeros((128, 128)))
    co, cs = model.chunked(q, k, v, g, beta, 128 ** -0.5, np.zeros((128, 128)))
    assert _rel(co, ro) <= 1e-2 and _rel(cs, rs) <= 5e-3


def test_levels():
    lev = model.levels()
    assert lev[1, 0] == 0 and lev[3, 2] == 0 and lev[2, 0] == 1 and lev[63, 0] == 5
    assert (lev[np.triu_indices(64)] == -1).all()


def test_gates_beyond_the_chunk_range_overflow():
    """The limit kda_prefill routes around (CHUNK_DECAY_MIN): a chunk whose total log-decay of
    some channel is below −2·127·ln 2 ≈ −176 overflows 2^(γ_C/2) in f32."""
    q, k, v, g, beta = _inputs(64, seed=7, gate_scale=16.0)
    assert g.sum(axis=0).min() < -176
    with np.errstate(over="ignore", invalid="ignore"):
        co, _ = model.chunked(q, k, v, g, beta, 128 ** -0.5, np.zeros((128, 128)))
    assert not np.isfinite(co).all()


def _loop_body(source: str, header: str, nth: int) -> str:
    """The text of the nth loop that starts with `header`, up to its matching brace."""
    start = -1
    for _ in range(nth + 1):
        start = source.index(header, start + 1)
    depth, i = 0, source.index("{", start)
    for j in range(i, len(source)):
        depth += {"{": 1, "}": -1}.get(source[j], 0)
        if depth == 0:
            return source[i:j + 1]
    raise AssertionError("unbalanced loop")


@pytest.mark.parametrize("name,state,loop", [
    ("kda_prefill_chunked", "s0", "for (i32 n = 0; n < chunks; ++n)"),
    ("kda_prefill_state", "s", "for (i32 i = 0; i < count; ++i)")])  # a segment's chunks
def test_state_stays_on_chip_in_the_emitted_code(name, state, loop):
    """Issue 15's requirement, read off the emitted CUDA: inside the state role's chunk loop the
    only global stores are the outputs O; the state is written to shared memory there (its
    bf16 copy for the next chunk's wgmmas) and to `Sn` once, after the loop."""
    from cakec import api

    kernel = Path(__file__).resolve().parents[2] / "cakec" / "kernels" / f"{name}.cake"
    source = api.emit(api.load(str(kernel))).unit.source
    loop = _loop_body(source, loop, 1)  # the state role's
    assert f"{state}[" in loop and "cake_stmatrix_x4" in loop
    stores = {m.group(1) for m in re.finditer(r"cake_(?:\w+_)?store_\w+<[^>]*>\((\w+)", loop)}
    assert stores == {"O"}, stores
    after = source[source.index(loop) + len(loop):]
    assert "cake_block_store_pair<2, CakeOutF32>(Sn" in after
