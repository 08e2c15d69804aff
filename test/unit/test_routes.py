"""Route tables (cakec/runtime/routes.py, docs/kernels.md): the shipped tables parse and
give every input a route; a table that would send some input nowhere, or to a route that
computes it wrongly, is refused with a message; the tuner's per-bucket choice."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from cakec.runtime import routes
from cakec.runtime.routes import Measured, RouteTableError, buckets, candidates, choose


def gemm_table(rules: list[dict]) -> dict:
    return {"entry": "gemm", "target": "sm_90a", "extents": ["m", "n", "k"],
            "routes": {"big": {"kernel": "gemm_bf16"}, "skinny": {"kernel": "gemm_bf16_skinny"},
                       "narrow": {"kernel": "kmeans_assign_d64", "requires": {"m": [0, 64]}},
                       "torch": {}},
            "rules": rules}


@pytest.mark.parametrize("entry", ["gemm", "kmeans_assign"])
def test_shipped_tables_parse_and_name_shipped_kernels(entry):
    table = routes.load(entry, routes.path(entry))
    assert table.rules[-1].box == {} and table.entry == entry
    for r in table.rules:
        assert r.route == routes.TORCH or (routes.SOURCES / f"{table.kernel(r.route)}.cake").is_file()


@given(m=st.integers(1, 1 << 20), n=st.integers(1, 1 << 20), k=st.integers(1, 1 << 20))
def test_every_gemm_shape_has_a_route(m, n, k):
    table = routes.load("gemm", routes.path("gemm"))
    route = table.choose(m=m, n=n, k=k, k_mod64=k % 64, n_mod8=n % 8)  # gemm.extents
    assert route in {*table.routes, routes.TORCH}


def test_kmeans_d64_route_never_serves_a_wider_d():
    table = routes.load("kmeans_assign", routes.path("kmeans_assign"))
    for rows in (1, 10_000, 1 << 22):
        for d in (8, 64, 72, 96, 128):
            route = table.choose(rows=rows, k=100, d=d)
            assert d <= 64 or table.kernel(route) != "kmeans_assign_d64", (rows, d)


def test_first_matching_rule_wins():
    t = routes.parse(gemm_table([{"box": {"m": [0, 64]}, "route": "skinny"},
                                 {"box": {"m": [0, 128]}, "route": "torch"},
                                 {"box": {}, "route": "big"}]))
    assert [t.choose(m=m, n=1, k=1) for m in (64, 65, 128, 129)] == ["skinny", "torch",
                                                                        "torch", "big"]
    assert t.kernel("torch") is None and t.kernel("skinny") == "gemm_bf16_skinny"


@pytest.mark.parametrize("rules,message", [
    ([{"box": {"m": [0, 64]}, "route": "skinny"}], "the last rule must have an empty box"),
    ([], "the last rule must have an empty box"),
    ([{"box": {}, "route": "nope"}], "unknown route 'nope'"),
    ([{"box": {"q": [0, 1]}, "route": "big"}, {"box": {}, "route": "big"}], "bounds 'q'"),
    ([{"box": {"m": [9, 3]}, "route": "big"}, {"box": {}, "route": "big"}], "not 0 <= lo <= hi"),
    ([{"box": {"m": [0, 128]}, "route": "narrow"}, {"box": {}, "route": "big"}],
     r"sends m in \[0, 128\] to route 'narrow', which requires m in \[0, 64\]"),
    ([{"box": {}, "route": "narrow"}], "which requires m"),
])
def test_bad_tables_are_refused(rules, message):
    with pytest.raises(RouteTableError, match=message):
        routes.parse(gemm_table(rules))


def test_a_route_needs_a_shipped_kernel():
    raw = gemm_table([{"box": {}, "route": "big"}])
    raw["routes"]["big"] = {"kernel": "no_such_kernel"}
    with pytest.raises(RouteTableError, match="no shipped kernel no_such_kernel.cake"):
        routes.parse(raw)


def test_load_reads_the_override_folder(tmp_path, monkeypatch):
    (tmp_path / "gemm_routes.json").write_text(json.dumps(gemm_table(
        [{"box": {}, "route": "torch"}])))
    monkeypatch.setenv("CAKEC_ROUTES_DIR", str(tmp_path))
    assert routes.load("gemm").choose(m=1, n=1, k=1) == "torch"
    (tmp_path / "gemm_routes.json").write_text("{")
    with pytest.raises(RouteTableError, match="gemm_routes.json"):
        routes.load("gemm")


def test_buckets_tile_the_extents():
    boxes = buckets({"m": [16, 64], "n": [100]})
    assert len(boxes) == 6
    for m in (0, 16, 17, 64, 65, 10**9):
        for n in (1, 100, 101):
            assert sum(routes.inside(b, {"m": m, "n": n}) for b in boxes) == 1


def test_choose_takes_the_fastest_cake_route_and_torch_only_past_the_margin():
    table = routes.parse(gemm_table([{"box": {}, "route": "big"}]))
    measured = [
        Measured((1, 4096, 4096), {"big": 30.0, "skinny": 10.0, "torch": 20.0}, {}),
        Measured((16, 4096, 4096), {"big": 30.0, "skinny": 12.0, "torch": 20.0}, {}),
        # m in (64, 128]: skinny computed wrongly at one shape, so big vs torch
        Measured((100, 4096, 4096), {"big": 23.0, "torch": 20.0}, {"skinny": "rel err"}),
        Measured((120, 4096, 4096), {"big": 21.0, "skinny": 5.0, "torch": 20.0}, {}),
        Measured((5000, 4096, 4096), {"big": 10.0, "torch": 10.5}, {}),
    ]
    got = choose(table, measured, lambda s: {"m": s[0], "n": s[1], "k": s[2]},
                 {"m": [64, 128]}, "big", {"device": "test"})
    assert [(r.box, r.route) for r in got.rules] == [
        ({"m": (0, 64)}, "skinny"), ({"m": (65, 128)}, "big"), ({"m": (129, None)}, "big"),
        ({}, "big")]
    assert got.rules[0].measured["x_torch"]["skinny"] == pytest.approx(20 / (120 ** 0.5), abs=1e-3)
    # torch wins by more than the margin: the bucket falls back
    slow = [Measured((1, 8, 8), {"big": 30.0, "skinny": 30.0, "torch": 20.0}, {})]
    assert choose(table, slow, lambda s: {"m": s[0], "n": s[1], "k": s[2]}, {"m": [64]},
                  "big", {}).rules[0].route == "torch"
    assert routes.parse(got.to_json()).rules == got.rules  # what tune writes loads again


def test_adopt_keeps_the_rules_and_takes_only_those_a_new_route_wins():
    """`cakec tune --adopt`: each rule keeps its box; a listed route replaces the rule's route
    only where it is faster over the shapes that rule serves (first match) and correct at
    all of them; rules without measured shapes stay."""
    raw = gemm_table([{"box": {"m": [0, 64]}, "route": "skinny"},
                      {"box": {"m": [65, 1000]}, "route": "torch"},
                      {"box": {"m": [1001, 2000]}, "route": "big"}, {"box": {}, "route": "big"}])
    raw["routes"]["mc"] = {"kernel": "gemm_bf16_mc"}
    table = routes.parse(raw)
    ext = lambda s: {"m": s[0], "n": s[1], "k": s[2]}  # noqa: E731
    measured = [
        Measured((1, 8, 8), {"skinny": 10.0, "mc": 12.0, "torch": 20.0}, {}),     # skinny stays
        Measured((100, 8, 8), {"big": 30.0, "mc": 19.0, "torch": 20.0}, {}),       # mc wins
        Measured((900, 8, 8), {"big": 30.0, "mc": 19.0, "torch": 20.0}, {}),
        Measured((1500, 8, 8), {"big": 10.0, "torch": 20.0}, {"mc": "rel err"}),   # wrong once
        Measured((1600, 8, 8), {"big": 10.0, "mc": 5.0, "torch": 20.0}, {}),
        Measured((5000, 8, 8), {"big": 10.0, "mc": 9.0, "torch": 20.0}, {}),       # catch-all
    ]
    got = routes.adopt(table, measured, ext, ["mc"], {"device": "test"})
    assert [(r.box, r.route) for r in got.rules] == [
        ({"m": (0, 64)}, "skinny"), ({"m": (65, 1000)}, "mc"), ({"m": (1001, 2000)}, "big"),
        ({}, "mc")]
    assert got.rules[1].measured["adopted_over"] == "torch"
    assert got.rules[1].measured["shapes"] == [[100, 8, 8], [900, 8, 8]]
    assert got.tuned["adopted"] == {"routes": ["mc"], "device": "test"}
    assert routes.parse(got.to_json()).rules == got.rules  # what tune writes loads again
    with pytest.raises(RouteTableError, match="no route 'nope'"):
        routes.adopt(table, measured, ext, ["nope"], {})


def test_a_multi_wave_split_takes_a_bucket_only_past_its_margin():
    raw = gemm_table([{"box": {}, "route": "big"}])
    raw["routes"]["split"] = {"kernel": "gemm_bf16_splitk_decode", "split_k": {"tile": [64, 64]}}
    raw["routes"]["waves"] = {"kernel": "gemm_bf16_splitk_decode",
                              "split_k": {"tile": [64, 64], "waves": True}}
    table = routes.parse(raw)
    tie = [Measured((1, 8, 8), {"big": 30.0, "split": 10.1, "waves": 10.0, "torch": 20.0}, {})]
    win = [Measured((1, 8, 8), {"big": 30.0, "split": 11.0, "waves": 10.0, "torch": 20.0}, {})]
    alone = [Measured((1, 8, 8), {"waves": 10.0, "torch": 20.0}, {})]
    pick = [choose(table, ms, lambda s: {"m": s[0], "n": s[1], "k": s[2]}, {"m": [64]}, "big",
                   {}).rules[0].route for ms in (tie, win, alone)]
    assert pick == ["split", "waves", "waves"]


def _have_sm90() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


@pytest.mark.skipif(_have_sm90(), reason="with an sm_90 GPU the command tunes")
def test_cakec_tune_without_a_gpu_is_one_error_line():
    from click.testing import CliRunner

    from cakec.cli import main

    result = CliRunner().invoke(main, ["tune", "gemm"])
    assert result.exit_code == 2
    assert result.output.startswith("cakec: error: cakec tune needs ")
    assert result.output.count("\n") == 1 and "Traceback" not in result.output
    bad = CliRunner().invoke(main, ["tune", "fmha"])
    assert bad.exit_code == 2 and "'fmha' is not one of 'gemm', 'kmeans_assign'" in bad.output


def test_candidates_honour_candidate_and_requires_boxes():
    raw = gemm_table([{"box": {}, "route": "big"}])
    raw["routes"]["skinny"]["candidate"] = {"m": [0, 512]}
    table = routes.parse(raw)
    assert candidates(table, {"m": 64, "n": 1, "k": 1}) == ["big", "skinny", "narrow", "torch"]
    assert candidates(table, {"m": 100, "n": 1, "k": 1}) == ["big", "skinny", "torch"]
    assert candidates(table, {"m": 4096, "n": 1, "k": 1}) == ["big", "torch"]


@pytest.mark.parametrize("spec", [{"tile": [64]}, {"tile": [0, 64]}, {"tile": "64x64"}, {},
                                  [64, 64]])
def test_a_split_route_needs_its_tile(spec):
    raw = gemm_table([{"box": {}, "route": "big"}])
    raw["routes"]["split"] = {"kernel": "gemm_bf16_splitk_decode", "split_k": spec}
    with pytest.raises(RouteTableError, match="split_k needs a 'tile' of two positive ints"):
        routes.parse(raw)


def test_split_tile_names_the_split_routes_only():
    table = routes.load("gemm", routes.path("gemm"))
    assert table.split_tile("splitk_64x64") == (64, 64)
    assert table.split_tile("splitk_128x128") == (128, 128)
    assert table.split_tile("skinny_64x32") is None and table.split_tile("torch") is None


def test_split_parts_with_waves_may_fill_several():
    swap, t64 = (16, 64), (64, 64)
    assert routes.split_parts(172, 64, 132, swap, waves=True) == 3    # 7×11008×4096: 4 waves
    assert routes.split_parts(172, 64, 132, swap) == 1                # one wave: no split
    assert routes.split_parts(448, 64, 132, t64, waves=True) == 2     # 64×28672×4096
    assert routes.split_parts(64, 224, 132, swap, waves=True) == 2    # one wave is best anyway
    assert routes.split_parts(1, 1000, 132, t64, waves=True) == routes.MAX_PARTS
    assert routes.split_parts(5, 0, 132, t64, waves=True) == 1


def test_split_waves_is_a_flag_of_the_split_routes():
    table = routes.load("gemm", routes.path("gemm"))
    assert table.split_waves("splitk_swap_16x64_waves") and table.split_waves("splitk_64x64_waves")
    assert not table.split_waves("splitk_swap_16x64") and not table.split_waves("torch")
    raw = table.to_json()
    raw["routes"]["splitk_64x64"]["split_k"]["waves"] = "yes"
    with pytest.raises(RouteTableError, match="'waves' must be true or false"):
        routes.parse(raw)


def test_split_tail_is_a_flag_of_the_tail_routes_and_excludes_waves():
    table = routes.load("gemm", routes.path("gemm"))
    assert table.split_tail("splitk_swap_16x64_tail") and table.split_tail("splitk_64x128_tail")
    assert not table.split_tail("splitk_swap_16x64") and not table.split_tail("torch")
    raw = table.to_json()
    raw["routes"]["splitk_64x64_tail"]["split_k"]["tail"] = 1
    with pytest.raises(RouteTableError, match="'tail' must be true or false"):
        routes.parse(raw)
    raw["routes"]["splitk_64x64_tail"]["split_k"].update(tail=True, waves=True)
    with pytest.raises(RouteTableError, match="both 'waves' and 'tail'"):
        routes.parse(raw)


def test_tail_parts_split_only_the_last_waves_tiles():
    swap, t64, t128 = (16, 64), (64, 64), (64, 128)
    assert routes.tail_parts(448, 64, 132, swap) == 2     # 1×28672×4096: 3 waves + 52 tiles × 2
    assert routes.tail_parts(172, 64, 132, swap) == 3     # 7×11008×4096: 1 wave + 40 tiles × 3
    assert routes.tail_parts(448, 64, 132, t128) == 2     # 200×14336×4096 on 64×128 tiles
    assert routes.tail_parts(224, 64, 132, t128) == 1     # a tail of 92: two parts are 2 waves
    assert routes.tail_parts(264, 64, 132, t64) == 1      # whole waves: nothing to split
    for tiles, k_tiles in [(64, 224), (32, 64), (5, 0), (131, 64)]:  # below one wave: as before
        want = routes.split_parts(tiles, k_tiles, 132, t64)
        assert routes.tail_parts(tiles, k_tiles, 132, t64) == want


def test_split_parts_fills_one_wave():
    t64, t128, swap = (64, 64), (128, 128), (16, 64)
    assert routes.split_parts(64, 64, 132, t64) == 2      # N = 4096 at 64 wide: 128 units
    assert routes.split_parts(64, 224, 132, t64) == 2     # K = 14336: still one wave
    assert routes.split_parts(32, 64, 132, t128) == 4     # M = 128, N = 4096: 128 units
    assert routes.split_parts(80, 80, 132, t64) == 1      # N = 5120: two parts are 160 units
    assert routes.split_parts(448, 64, 132, swap) == 1    # 1×28672×4096: 448 tiles already
    assert routes.split_parts(512, 64, 132, t64) == 1     # enough tiles: no split
    assert routes.split_parts(1, 3, 132, t128) == 1       # a split that saves less than it costs
    assert routes.split_parts(1, 20, 132, t128) == 10     # 2 stages each, the fewest parts for it
    assert routes.split_parts(1, 1000, 132, t128) == routes.MAX_PARTS
    assert routes.split_parts(5, 0, 132, t128) == 1       # K = 0 is one (empty) stage


def test_split_cost_is_the_partials_round_trip_in_stages():
    assert routes.split_cost_stages((128, 128)) == 4      # 64 KiB each way, 32 KiB stages
    assert routes.split_cost_stages((64, 64)) == 2
    assert routes.split_cost_stages((16, 64)) == pytest.approx(0.8)


@given(st.integers(1, 4096), st.integers(0, 4096), st.integers(1, 264),
       st.sampled_from([(128, 128), (64, 64), (16, 64), (64, 128)]))
def test_split_parts_is_in_range_one_wave_and_never_slower_than_no_split(tiles, k_tiles, sms, tile):
    s = routes.split_parts(tiles, k_tiles, sms, tile)
    assert 1 <= s <= min(routes.MAX_PARTS, max(k_tiles, 1))
    assert s == 1 or tiles * s <= sms                     # the units fit one wave
    def cost(p: int) -> float:
        extra = routes.split_cost_stages(tile) if p > 1 else 0
        return -(-tiles * p // sms) * (-(-max(k_tiles, 1) // p) + extra)
    assert cost(s) <= cost(1)


def test_tune_rechooses_the_shipped_table_from_its_timings(tmp_path):
    """`cakec tune --measured` (no torch, no GPU): the shipped gemm table is what its saved
    timings choose (with `--adopt` of the routes it adopted, when it was written so: its
    other rules came from the timings before), and the timings written beside the new table
    load back the same."""
    from cakec.runtime import tuning

    shipped = routes.path("gemm")
    adopted = sorted({r.route for r in routes.load("gemm", shipped).rules
                      if r.measured.get("adopted_over")})
    written = tuning.rechoose("gemm", tuning.measured_path(shipped), tmp_path, lambda _: None,
                              adopted or None)
    again = routes.load("gemm", written)
    assert [(r.box, r.route) for r in again.rules] == \
        [(r.box, r.route) for r in routes.load("gemm", shipped).rules]
    _, first = tuning.load_measured(tuning.measured_path(shipped), "gemm")
    _, second = tuning.load_measured(tuning.measured_path(written), "gemm")
    assert first == second and len(first) == len(tuning.GEMM_SHAPES)


def test_tune_refuses_timings_of_another_entry(tmp_path):
    from cakec.runtime import tuning

    with pytest.raises(RouteTableError, match="not 'gemm'"):
        tuning.load_measured(tuning.measured_path(routes.path("kmeans_assign")), "gemm")
    bad = tmp_path / "gemm_measured.json"
    bad.write_text("{}")
    with pytest.raises(RouteTableError, match="timings"):
        tuning.load_measured(bad, "gemm")


def test_cakec_tune_measured_needs_no_gpu(tmp_path):
    from click.testing import CliRunner

    from cakec.cli import main
    from cakec.runtime import tuning

    timings = str(tuning.measured_path(routes.path("kmeans_assign")))
    result = CliRunner().invoke(main, ["tune", "kmeans_assign", "--measured", timings,
                                       "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "everything else" in result.output and "-> rows256" in result.output
    assert routes.load("kmeans_assign", tmp_path / "kmeans_assign_routes.json").rules
    wrong = CliRunner().invoke(main, ["tune", "gemm", "--measured", timings,
                                      "--out", str(tmp_path)])
    assert wrong.exit_code != 0 and "not 'gemm'" in wrong.output
    assert "Traceback" not in wrong.output


def test_cakec_tune_adopt_keeps_the_shipped_rules_but_where_a_route_measured_faster(tmp_path):
    """`cakec tune gemm --measured FILE --adopt ROUTES` (no GPU): the shipped boxes, every
    rule's route kept unless a listed route was faster over that rule's shapes in FILE; an
    unknown route is one error line."""
    from click.testing import CliRunner

    from cakec.cli import main
    from cakec.runtime import tuning

    timings = tuning.measured_path(routes.path("gemm"))
    result = CliRunner().invoke(main, ["tune", "gemm", "--measured", str(timings), "--adopt",
                                       "torch", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    shipped = routes.load("gemm").rules
    got = routes.load("gemm", tmp_path / "gemm_routes.json").rules
    assert [r.box for r in got] == [r.box for r in shipped]
    _, measured = tuning.load_measured(timings, "gemm")
    for old, new in zip(shipped, got):
        if new.route != old.route:  # torch took it: faster over the rule's shapes
            assert new.route == "torch" and new.measured["adopted_over"] == old.route
            ms = new.measured["ms"]
            assert ms["torch"] < ms[old.route], (new.box, ms)
            assert "adopted over" in result.output
    bad = CliRunner().invoke(main, ["tune", "gemm", "--measured", str(timings), "--adopt",
                                    "nope", "--out", str(tmp_path)])
    assert bad.exit_code != 0 and "no route 'nope'" in bad.output
    assert "Traceback" not in bad.output
