"""Which kernel `fmha` (examples/attention/fmha_fwd_sm90.py) runs for a head dim, the mask
and S_k, and that the GPU tests and bench/fmha.py (through `alternatives`) cover every
schedule it can pick. No GPU or torch needed: the module imports them only to launch."""

from __future__ import annotations

from pathlib import Path

import pytest

from cakec.api import load_example

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def ex():
    return load_example(ROOT / "examples" / "attention" / "fmha_fwd_sm90.cake")


def test_d64_masked_head_major_but_long_causal(ex):
    long = ex.D64_LONG_KEYS
    for s_k in (1, 1024, long, long + 1, 1 << 20):
        assert ex.kernel_file(64, False, s_k) == ex.D64_MASKED
    assert ex.kernel_file(64, True, 1) == ex.D64_MASKED
    assert ex.kernel_file(64, True, long) == ex.D64_MASKED
    assert ex.kernel_file(64, True, long + 1) == ex.LAZY[64]


def test_d128_head_major_up_to_hm_keys_then_lazy(ex):
    hm, last = ex.HEAD_MAJOR[128][0], ex.HM_KEYS
    for causal in (False, True):
        assert ex.kernel_file(128, causal, 1) == hm
        assert ex.kernel_file(128, causal, last) == hm
        assert ex.kernel_file(128, causal, last + 1) == ex.LAZY[128]
        assert ex.kernel_file(128, causal, 1 << 20) == ex.LAZY[128]


@pytest.mark.parametrize("d", [64, 128])
def test_alternatives_cover_every_pick(ex, d):
    """A schedule `fmha` runs only at some shapes is also checked and timed at all of them."""
    picks = {ex.kernel_file(d, c, s) for c in (False, True) for s in (1, 1 << 20)}
    alts = set(ex.alternatives(d))
    if len(picks) > 1:
        assert picks <= alts
    every = set(ex.SCHEDULES[d])
    assert alts | picks == every
    for f in every:
        assert (ex.HERE / f).exists()
