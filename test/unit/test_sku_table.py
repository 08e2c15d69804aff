"""The target capability table: known hardware facts, the helpers gates use, its renderings."""

import dataclasses
import json
from pathlib import Path

import pytest

from cakec.targets.sku import (
    DEFAULT_TARGET, FAMILIES, PTX_MIN_VERSION, SKUS, get_sku, is_valid_setmaxnreg,
    is_valid_tmem_alloc, is_warpgroup, ptx_version_for, tma_inner_box_fits, tmem_alloc_columns,
    tmem_lanes_for_warp)
from cakec.targets.sku_table import (
    format_targets_markdown, format_targets_text, sku_markdown_rows, targets_json)

DOC = Path(__file__).resolve().parents[2] / "docs" / "targets.md"


def having(family: str) -> set[str]:
    return {s.name for s in SKUS.values() if family in s.families}


def test_targets_in_table_order() -> None:
    assert list(SKUS) == ["sm_80", "sm_89", "sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a"]
    assert DEFAULT_TARGET == "sm_100a" and get_sku(DEFAULT_TARGET) is SKUS["sm_100a"]
    assert all(s.max_threads_per_block == 1024 for s in SKUS.values())


def test_unknown_target_lists_known_ones() -> None:
    with pytest.raises(KeyError, match="sm_80, sm_89, sm_90a, sm_100a, sm_103a, sm_120a, sm_121a"):
        get_sku("sm_95")


def test_no_tensor_memory_outside_datacenter_blackwell() -> None:
    for family in ("tcgen05", "tmem", "cta_group2"):
        assert having(family) == {"sm_100a", "sm_103a"}
    assert {n: s.tmem_columns for n, s in SKUS.items()} == {
        "sm_80": 0, "sm_89": 0, "sm_90a": 0, "sm_100a": 512, "sm_103a": 512, "sm_120a": 0,
        "sm_121a": 0}


def test_instruction_family_placement() -> None:
    assert having("wgmma") == {"sm_90a"}
    assert having("tcgen05_ld_red") == {"sm_103a"}
    assert having("mma_sync_fp8") == set(SKUS) - {"sm_80"}
    assert having("mma_sync_f8f6f4") == {"sm_120a", "sm_121a"}
    assert having("setmaxnreg") == {"sm_90a", "sm_100a", "sm_103a", "sm_120a", "sm_121a"}
    for family in ("tma", "tma_store", "mbarrier_tx", "cluster", "multicast", "stmatrix"):
        assert having(family) == set(SKUS) - {"sm_80", "sm_89"}, family
    for family in ("mma_sync", "ldmatrix", "cp_async", "mbarrier"):
        assert having(family) == set(SKUS), family


def test_launch_limits() -> None:
    assert {n: s.smem_per_block_optin for n, s in SKUS.items()} == {
        "sm_80": 166912, "sm_89": 101376, "sm_90a": 232448, "sm_100a": 232448,
        "sm_103a": 232448, "sm_120a": 101376, "sm_121a": 101376}
    assert {n: s.max_cluster_size for n, s in SKUS.items()} == {
        "sm_80": 0, "sm_89": 0, "sm_90a": 8, "sm_100a": 8, "sm_103a": 8, "sm_120a": 8,
        "sm_121a": 8}


def test_target_minimum_ptx_versions() -> None:
    assert {n: s.min_ptx_version for n, s in SKUS.items()} == {
        "sm_80": (7, 0), "sm_89": (7, 8), "sm_90a": (8, 0), "sm_100a": (8, 6),
        "sm_103a": (8, 8), "sm_120a": (8, 7), "sm_121a": (8, 8)}


def test_every_family_has_a_minimum_version() -> None:
    assert PTX_MIN_VERSION.keys() == FAMILIES.keys()


@pytest.mark.parametrize(("target", "families", "version"), [
    ("sm_80", [], (7, 0)),
    ("sm_80", ["mbarrier", "cp_async"], (7, 1)),
    ("sm_89", ["mma_sync_fp8"], (8, 4)),
    ("sm_89", ["mma_sync", "ldmatrix"], (7, 8)),
    ("sm_90a", ["wgmma", "tma", "stmatrix"], (8, 0)),
    ("sm_100a", ["tcgen05", "mma_sync_fp8"], (8, 6)),
    ("sm_103a", ["tcgen05_ld_red"], (8, 8)),
    ("sm_120a", ["mma_sync_f8f6f4"], (8, 7)),
])
def test_ptx_version_for(target: str, families: list[str], version: tuple[int, int]) -> None:
    assert ptx_version_for(get_sku(target), families) == version


def test_ptx_version_for_rejects_unknown_family() -> None:
    with pytest.raises(KeyError):
        ptx_version_for(get_sku("sm_90a"), ["wgmma2"])


def test_has_rejects_typos() -> None:
    assert get_sku("sm_90a").has("wgmma") and not get_sku("sm_120a").has("tmem")
    with pytest.raises(KeyError):
        get_sku("sm_90a").has("tensor_memory")


def test_table_rejects_inconsistent_skus() -> None:
    base = get_sku("sm_90a")
    with pytest.raises(ValueError, match="tmem"):
        dataclasses.replace(base, tmem_columns=512)
    with pytest.raises(ValueError, match="cluster"):
        dataclasses.replace(base, max_cluster_size=0)
    with pytest.raises(ValueError, match="needs wgmma"):
        dataclasses.replace(base, families=base.families - {"wgmma"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.tmem_columns = 512  # type: ignore[misc]


def test_mma_instruction_per_target() -> None:
    instructions = {n: {f.instruction for f in s.mma_forms} for n, s in SKUS.items()}
    assert instructions["sm_90a"] == {"wgmma", "mma.sync"}
    assert instructions["sm_100a"] == instructions["sm_103a"] == {"tcgen05.mma", "mma.sync"}
    for name in ("sm_80", "sm_89", "sm_120a", "sm_121a"):
        assert instructions[name] == {"mma.sync"}


def test_mma_k_per_dtype() -> None:
    expected_k = {"bf16": 16, "f16": 16, "tf32": 8, "e4m3": 32, "e5m2": 32, "i8": 32}
    for s in SKUS.values():
        for form in s.mma_forms:
            for a, _ in form.ab_dtypes:
                assert form.k == expected_k[a], (s.name, form)


def test_mma_execution_contract() -> None:
    for s in SKUS.values():
        for form in s.mma_forms:
            issuer, acc = {"mma.sync": ("warp", "regs"), "wgmma": ("warpgroup", "regs"),
                           "tcgen05.mma": ("thread", "tmem")}[form.instruction]
            assert (form.issuer, form.acc_location) == (issuer, acc)


def test_preferred_form_comes_first() -> None:
    def first(target: str) -> str:
        return get_sku(target).mma_forms_for("bf16", "bf16", "f32")[0].instruction
    assert [first(t) for t in SKUS] == [
        "mma.sync", "mma.sync", "wgmma", "tcgen05.mma", "tcgen05.mma", "mma.sync", "mma.sync"]
    assert get_sku("sm_90a").mma_forms_for("bf16", "f16", "f32") == ()
    assert get_sku("sm_80").mma_forms_for("e4m3", "e4m3", "f32") == ()
    assert get_sku("sm_89").mma_forms_for("e4m3", "e5m2", "f32")


def test_wgmma_shapes() -> None:
    forms = {f.kind: f for f in get_sku("sm_90a").mma_forms if f.instruction == "wgmma"}
    assert forms["f16"].allows("bf16", "bf16", "f32", 64, 24)
    assert not forms["f16"].allows("bf16", "bf16", "f32", 64, 264)
    assert not forms["f16"].allows("bf16", "bf16", "f32", 128, 64)
    assert [n for n in range(8, 257, 8) if forms["i8"].allows("i8", "i8", "i32", 64, n)] == [
        8, 16, 24, *range(32, 257, 16)]
    assert forms["f16"].transpose and not forms["tf32"].transpose and not forms["f8"].transpose


def test_tcgen05_shapes() -> None:
    forms = [f for f in get_sku("sm_100a").mma_forms if f.kind == "f16" and f.instruction ==
             "tcgen05.mma"]

    def legal(m: int, n: int, group: int) -> bool:
        return any(f.allows("bf16", "bf16", "f32", m, n) and f.cta_group == group for f in forms)

    assert legal(64, 8, 1) and legal(128, 16, 1) and legal(128, 256, 1)
    assert not legal(128, 8, 1) and not legal(256, 128, 1) and not legal(64, 264, 1)
    assert legal(256, 256, 2) and not legal(64, 64, 2)
    assert all(f.family == ("cta_group2" if f.cta_group == 2 else "tcgen05") for f in forms)


def test_tcgen05_i8_only_on_sm_100a() -> None:
    def kinds(target: str) -> set[str]:
        return {f.kind for f in get_sku(target).mma_forms if f.instruction == "tcgen05.mma"}
    assert kinds("sm_100a") == {"f16", "tf32", "f8f6f4", "i8"}
    assert kinds("sm_103a") == {"f16", "tf32", "f8f6f4"}


def test_tma_inner_box() -> None:
    assert tma_inner_box_fits("128b", 128) and not tma_inner_box_fits("128b", 256)
    assert tma_inner_box_fits("32b", 32) and not tma_inner_box_fits("64b", 80)
    assert tma_inner_box_fits("none", 512) and not tma_inner_box_fits("none", 24)


def test_tmem_allocation() -> None:
    assert [c for c in range(0, 1025) if is_valid_tmem_alloc(c)] == [32, 64, 128, 256, 512]
    assert [tmem_alloc_columns(c) for c in (1, 32, 33, 128, 300, 512)] == [
        32, 32, 64, 128, 512, 512]
    with pytest.raises(ValueError):
        tmem_alloc_columns(513)


def test_tmem_lane_quarters() -> None:
    assert tmem_lanes_for_warp(0) == range(0, 32)
    assert tmem_lanes_for_warp(5) == range(32, 64)
    assert tmem_lanes_for_warp(11) == range(96, 128)


def test_warpgroup_alignment() -> None:
    assert is_warpgroup([4, 5, 6, 7]) and is_warpgroup([3, 0, 2, 1])
    assert not is_warpgroup([2, 3, 4, 5]) and not is_warpgroup([0, 1, 2])
    assert not is_warpgroup([0, 1, 2, 4])


def test_setmaxnreg_range() -> None:
    assert all(is_valid_setmaxnreg(n) for n in (24, 40, 232, 240, 256))
    assert not any(is_valid_setmaxnreg(n) for n in (16, 20, 236, 264))


def test_text_has_one_row_per_target() -> None:
    lines = format_targets_text().splitlines()
    for name, s in SKUS.items():
        row = next(line for line in lines if line.startswith(name + " "))
        assert str(s.smem_per_block_optin) in row and s.description in row


def test_json_is_serialisable_and_complete() -> None:
    data = json.loads(json.dumps(targets_json()))
    assert data["default_target"] == DEFAULT_TARGET
    assert [t["name"] for t in data["targets"]] == list(SKUS)
    sm90 = data["targets"][2]
    assert "wgmma" in sm90["families"] and sm90["tmem_columns"] == 0
    assert {f["issuer_threads"] for f in sm90["mma_forms"]} == {128, 32}
    assert data["limits"]["tma"]["swizzle_smem_align"]["128b"] == 1024


def test_doc_embeds_the_generated_table() -> None:
    doc = DOC.read_text()
    begin, end = "<!-- BEGIN TABLE -->\n", "<!-- END TABLE -->"
    assert begin in doc and end in doc, "docs/targets.md lost its table markers"
    embedded = doc.split(begin, 1)[1].split(end, 1)[0]
    for row in sku_markdown_rows():
        assert row in embedded.splitlines(), f"docs/targets.md is stale: missing {row!r}"
    assert embedded == format_targets_markdown(), (
        "docs/targets.md is stale; regenerate the block between the markers from "
        "cakec.targets.sku_table.format_targets_markdown()")
