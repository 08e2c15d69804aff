"""bench/kda_decode_probe.py's KDA decode variants (ablations and candidate schedules for the
B = 256 decode, docs/kernels.md): each verifies and emits for sm_90a, so a GPU run of the
probe measures what it names; and the persistent forms, built with NVRTC, issue the next
block's state loads before the current block's first barrier (the overlap they exist for)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from kda_decode_probe import VARIANTS, in_bounds_sass  # noqa: E402

from cakec import api  # noqa: E402
from cakec.targets.host.toolkit import find_tool  # noqa: E402


def _have_nvrtc() -> bool:
    from cakec.targets.host import nvrtc

    try:
        nvrtc.nvrtc_version()
        return True
    except Exception:
        return False


# One of each form: a cut step, the full step at 1 and at 4 CTAs per SM and on a 3-D grid,
# both persistent forms.
@pytest.mark.parametrize("name", ["16c_u", "64c_full", "64c_bps4", "16c_grid3", "p16_6",
                                  "q32_3"])
def test_variant_emits_for_sm_90a(name):
    unit = api.emit_unit(None, "sm_90a", source=VARIANTS[name]())
    assert f"kda_decode_{'pipe' if name[0] in 'pq' else 'wide'}(" in unit.source


@pytest.mark.skipif(not _have_nvrtc() or find_tool("cuobjdump") is None,
                    reason="needs NVRTC and cuobjdump")
@pytest.mark.parametrize("name", ["p16_6", "q32_3"])
def test_persistent_form_loads_ahead(name):
    _, body = in_bounds_sass(name)
    first_bar = next(i for i, ln in enumerate(body) if "BAR.SYNC" in ln)
    state_loads = [i for i, ln in enumerate(body) if "LDG.E.128" in ln]
    assert len(state_loads) == int(name[1:3]) // 4  # a thread's next 4 × (N / 4) state values
    assert max(state_loads) < first_bar
