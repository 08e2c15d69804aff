"""Thread-block clusters and TMA multicast without a GPU: the multicast group geometry the
emitter's ctaMask and remote arrivals use, the facts derived for the 2-CTA k-means kernel
(examples/kmeans_assign_mc.cake: arrivals per phase, launch metadata, grid rounding), and the
SASS that proves the hardware paths (multicast TMA, cluster barrier, remote mbarrier
arrivals) on sm_90a and sm_100a. The diagnostics are pinned by test/lit/cluster/."""

from __future__ import annotations

import re
import subprocess
import tempfile
from itertools import product
from pathlib import Path

import pytest
from test_targets_assemble import _tool

from cakec import api
from cakec.dialects import cake
from cakec.runtime import expr
from cakec.targets.cluster import group_offsets, group_pattern
from cakec.targets.cluster import member_offset

ROOT = Path(__file__).resolve().parents[2]
MC = ROOT / "examples" / "kmeans_assign_mc.cake"
LIT_OK = ROOT / "test" / "lit" / "cluster" / "multicast_ok.cake"


def _rank(c: tuple[int, int, int], shape: tuple[int, int, int]) -> int:
    return c[0] + shape[0] * (c[1] + shape[1] * c[2])


@pytest.mark.parametrize("shape,axes", [((2, 1, 1), (0,)), ((2, 2, 1), (0,)),
                                        ((2, 2, 1), (1,)), ((2, 2, 1), (0, 1)),
                                        ((2, 2, 2), (0, 2)), ((4, 2, 1), (1,))])
def test_groups_are_the_ctas_that_differ_along_their_axes(shape, axes) -> None:
    """For every CTA: its group (offsets from the base, the ctaMask pattern, and the C
    expression the remote arrivals index members by) is exactly the CTAs whose coordinates
    differ from its own only along `axes`."""
    offsets = group_offsets(shape, axes)
    assert group_pattern(shape, axes) == sum(1 << o for o in offsets)
    c_expr = member_offset("m", shape, axes).replace("u", "").replace("/", "//")
    assert [eval(c_expr, {"m": m}) for m in range(len(offsets))] == offsets
    for me in product(*(range(n) for n in shape)):
        peers = {_rank(p, shape) for p in product(*(range(n) for n in shape))
                 if all(p[a] == me[a] for a in range(3) if a not in axes)}
        base = _rank(tuple(0 if a in axes else me[a] for a in range(3)), shape)
        assert {base + o for o in offsets} == peers


def test_kmeans_multicast_derives_the_cluster_bookkeeping() -> None:
    result = api.emit(api.load(str(MC)), "sm_90a")
    assert result.unit is not None
    kernel = next(op for op in result.comp.module.ops if isinstance(op, cake.KernelOp))
    arrivals = {b.sym_name.data: b.attributes["cake.arrivals"].value.data
                for b in kernel.body.block.ops if isinstance(b, cake.BarrierOp)}
    # full: two copies' expect_tx (this CTA's); empty: 8 warps × both CTAs of the pair.
    assert arrivals == {"x_full": 1, "x_empty": 8, "full": 2, "empty": 16}
    meta = result.unit.metadata
    assert meta["cluster"] == [2, 1, 1]
    assert "__cluster_dims__(2, 1, 1)" in result.unit.source
    # The persistent grid: sm_count // 2 clusters of 2, rounded to whole clusters.
    grid = meta["grid"][0]
    assert expr.evaluate(grid, {"N": 65536, "B": 32, "sm_count": 132}) == 132
    assert expr.evaluate(grid, {"N": 1, "B": 1, "sm_count": 132}) == 2


def test_a_runtime_grid_is_rounded_to_whole_clusters() -> None:
    src = LIT_OK.read_text().replace("lm.grid(4)", "lm.grid(G)").replace(
        "O: LM.tensor2d):", "O: LM.tensor2d, G: LM.i32):")
    result = api.emit(api.load(source=src), "sm_90a")
    assert result.unit is not None
    grid = result.unit.metadata["grid"]
    assert [expr.evaluate(g, {"G": 7}) for g in grid] == [8, 1, 1]


def _sass(path: Path, target: str) -> str:
    tool = _tool("cuobjdump")
    if tool is None:
        pytest.skip("cuobjdump not installed (pip install nvidia-cuda-cuobjdump)")
    unit = api.emit_unit(path, target)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(api.binary(unit, "cubin"))
        f.flush()
        return subprocess.run([tool, "--dump-sass", f.name], capture_output=True, text=True,
                              check=True).stdout


@pytest.mark.parametrize("path,target,remote", [(MC, "sm_90a", r"SYNCS\.ARRIVE\.TRANS64\.RED"),
                                                (LIT_OK, "sm_90a", r"SYNCS\.ARRIVE\.TRANS64\.RED"),
                                                (LIT_OK, "sm_100a", r"SYNCS\.ARRIVE\.TRANS64")])
def test_sass_has_the_multicast_copy_and_the_cluster_barriers(path, target, remote) -> None:
    sass = _sass(path, target)
    assert re.search(r"UTMALDG\.\dD\.MULTICAST", sass), "no multicast TMA copy"
    assert "UCGABAR_ARV" in sass and "UCGABAR_WAIT" in sass, "no cluster barrier"
    assert re.search(remote, sass), "no mbarrier arrival"
    assert not re.search(r"\b(LDL|STL)\b", sass), "spills"
