"""No example or corpus kernel makes ptxas serialise its wgmmas (no GPU needed).

ptxas inserts a wait after every wgmma of a kernel when it cannot prove the accumulator
registers untouched while a group is in flight, and says so in its log (C7511, C7514, C7515,
C7519 "... wgmma.mma_async instructions are serialized ..."). The kernel still runs correctly,
only at the speed of an unpipelined one, so nothing else would notice: on the H200 a branch
around a wgmma and a warp diverged before one each cost the k-means kernel its pipeline
(test/distilled/wgmma_in_branch.test, wgmma_after_divergence.test).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import shared_builds
from kernel_files import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
SERIALISED = re.compile(r"C75\d\d\).*serialized")
# Kernels ptxas serialises on purpose, each with the measurement that says it costs nothing.
# Strict: once ptxas pipelines one again, its entry must go.
MEASURED_SERIAL = {
    # C7511 (255 registers) since a view store waits only for the wgmma groups that read the
    # view (2026-12-04): the state pass gained 0.254 -> 0.214 ms at B=1, T=8192, H=16, while
    # this latency-bound kernel measured 0.328 ms against 0.324 ms pipelined (H200, bench/kda.py).
    "kda_prefill_prep": "C7511 at the register limit, measured no slower (docs/kernels.md)",
    # The same code at blocks_per_sm=3 (168 registers): serialised as the shipped prep is; a
    # candidate behind kda_prefill_launch.PREP_3CTA, off until bench/kda_prep_ab.py times it.
    "kda_prefill_prep_3cta": "C7511 as kda_prefill_prep, a candidate not yet measured",
}
KERNELS = [
    pytest.param(p, id=p.stem, marks=pytest.mark.xfail(strict=True, reason=MEASURED_SERIAL[p.stem]))
    if p.stem in MEASURED_SERIAL else pytest.param(p, id=p.stem)
    for p in EXAMPLES if 'target="sm_90a"' in p.read_text()]


@pytest.mark.parametrize("path", KERNELS)
def test_wgmmas_stay_pipelined(path: Path) -> None:
    log = shared_builds.ptxas_report(shared_builds.unit(path, "sm_90a"))
    assert not SERIALISED.search(log), log


def test_the_pattern_matches_what_ptxas_prints() -> None:
    """Lines ptxas 13.0 printed for the k-means prototypes on 2026-11-29."""
    for line in [
        "ptxas info    : (C7514) Potential Performance Loss: wgmma.mma_async instructions are "
        "serialized due to non wgmma instructions reading accumulator registers of  a wgmma "
        "between start and end of the pipeline stage in the function 'kmeans_proto'",
        "ptxas info    : (C7519) Potential Performance Loss: wgmma.mma_async instructions are "
        "serialized due to program dependence on compiler-inserted WG.AR in divergent path in "
        "the function 'kmeans_assign' in line 1965",
        "ptxas info    : (C7511) Potential Performance Loss: wgmma.mma_async instructions are "
        "serialized due to insufficient register resources for the wgmma pipeline in the "
        "function 'kmeans_proto'"]:
        assert SERIALISED.search(line), line
    # The informational C7519/C7517 notes about injected fences are not serialisation.
    assert not SERIALISED.search("ptxas info    : (C7517) wgmma.wait_group is injected in around "
                                 "line 2324 by compiler to allow use of registers")
