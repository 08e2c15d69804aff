"""Route tables: which variant of a library entry serves which shape, as data.

Each entry with more than one variant (gemm: cakec/kernels/gemm_routes.json) has a JSON
table: the routes (a shipped .cake kernel, or the `torch` fallback), an ordered list of
rules (a box of extents -> a route, first match wins) whose last rule matches everything,
and what the rules were measured with. `cakec tune` rewrites the rules from timings on
the device (cakec/kernels/tune.py); this module reads and matches them, and makes the
tuner's choice, in pure Python (no torch, unlike cakec.kernels), so both are testable
anywhere. docs/kernels.md describes the format and the fallback hierarchy.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from cakec.errors import CakeUsageError

#: The shipped kernels and their tables (cakec/kernels/, which imports torch; this does not).
SOURCES = Path(__file__).resolve().parents[1] / "kernels"
#: The torch route takes a bucket only when it is this much faster than every Cake route.
FALLBACK_MARGIN = 1.10
#: A split-K route over several waves (`split_k.waves`) takes a bucket only when it is this
#: much faster than every one-wave Cake route there: measured on the H200 (2026-12-04), such
#: splits ran 1.3-2.7× slower than one wave wherever their S differed (e.g. 1×5120×5120 in 8
#: parts 52.7 µs against 22.9 in one) and tied where it did not (the same launch), so a tie
#: must not hand the bucket's other shapes a multi-wave split.
WAVES_MARGIN = 1.03
#: A route that is not a Cake kernel: the entry's torch equivalent (torch.matmul for gemm).
TORCH = "torch"


class RouteTableError(CakeUsageError):
    """A route table that does not parse, or whose rules leave some input without a route."""


@dataclass(frozen=True)
class Rule:
    """Extents inside `box` (per name: inclusive low, inclusive high or None for no bound)
    go to `route`. `measured` keeps what the tuner saw for this box (free-form)."""

    box: Mapping[str, tuple[int, int | None]]
    route: str
    measured: Mapping[str, Any] = field(default_factory=dict)

    def matches(self, extents: Mapping[str, int]) -> bool:
        for name, (lo, hi) in self.box.items():
            v = extents[name]
            if v < lo or (hi is not None and v > hi):
                return False
        return True


@dataclass(frozen=True)
class Table:
    entry: str
    target: str
    extents: tuple[str, ...]            # the names a rule's box may bound, e.g. ("m", "n", "k")
    routes: Mapping[str, Mapping[str, Any]]   # name -> {"kernel", "about", "requires"?}
    rules: tuple[Rule, ...]
    tuned: Mapping[str, Any]            # device, command, date of the measurement

    def choose(self, **extents: int) -> str:
        """The route of the first rule whose box holds `extents` (the last holds all)."""
        for rule in self.rules:
            if rule.matches(extents):
                return rule.route
        raise AssertionError("parse() guarantees a catch-all last rule")  # pragma: no cover

    def kernel(self, route: str) -> str | None:
        """The shipped kernel behind `route`, or None for the torch fallback."""
        return None if route == TORCH else self.routes[route]["kernel"]

    def split_tile(self, route: str) -> tuple[int, int] | None:
        """The output tile of a split-K route (its kernel also takes a workspace, counters
        and the number of K parts, cakec/kernels/gemm.py), or None for any other route."""
        tile = self.routes.get(route, {}).get("split_k", {}).get("tile")
        return None if tile is None else (tile[0], tile[1])

    def split_waves(self, route: str) -> bool:
        """Whether a split-K route may cut K into more units than one wave of SMs holds
        (`split_parts(..., waves=True)`): a route of its own, so the tuner decides."""
        return bool(self.routes.get(route, {}).get("split_k", {}).get("waves", False))

    def split_tail(self, route: str) -> bool:
        """Whether a split-K route's kernel splits only the tiles of the last, partial wave
        of SMs (`split_k.tail`, the *_tail kernels; S from `tail_parts`)."""
        return bool(self.routes.get(route, {}).get("split_k", {}).get("tail", False))

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry, "target": self.target, "extents": list(self.extents),
                "routes": {k: dict(v) for k, v in self.routes.items()},
                "rules": [{"box": {n: list(b) for n, b in r.box.items()}, "route": r.route,
                           **({"measured": dict(r.measured)} if r.measured else {})}
                          for r in self.rules],
                "tuned": dict(self.tuned)}


def _fail(where: str, msg: str) -> None:
    raise RouteTableError(f"route table {where}: {msg}")


def parse(raw: Mapping[str, Any], where: str = "<table>") -> Table:
    """Check a table's JSON: every rule names a known route and bounds only known extents
    with lo <= hi, and the last rule bounds nothing (every input has a route)."""
    extents = tuple(raw.get("extents", ()))
    routes = raw.get("routes", {})
    if not extents or not isinstance(routes, dict):
        _fail(where, "needs 'extents' and 'routes'")
    for name, r in routes.items():
        if name == TORCH:
            continue
        if not isinstance(r, dict) or not isinstance(r.get("kernel"), str):
            _fail(where, f"route {name!r} needs a 'kernel' (a shipped .cake file's name)")
        if not (SOURCES / f"{r['kernel']}.cake").is_file():
            _fail(where, f"route {name!r}: no shipped kernel {r['kernel']}.cake")
        for ext, bounds in r.get("requires", {}).items():
            if ext not in extents:
                _fail(where, f"route {name!r} requires {ext!r}, not one of {list(extents)}")
        if "split_k" in r:
            tile = r["split_k"].get("tile") if isinstance(r["split_k"], dict) else None
            if not (isinstance(tile, list) and len(tile) == 2
                    and all(type(t) is int and t > 0 for t in tile)):
                _fail(where, f"route {name!r}: split_k needs a 'tile' of two positive ints")
            for flag in ("waves", "tail"):
                if type(r["split_k"].get(flag, False)) is not bool:
                    _fail(where, f"route {name!r}: split_k {flag!r} must be true or false")
            if r["split_k"].get("waves") and r["split_k"].get("tail"):
                _fail(where, f"route {name!r}: split_k cannot be both 'waves' and 'tail'")
    rules = []
    for i, r in enumerate(raw.get("rules", ())):
        route = r.get("route")
        if route != TORCH and route not in routes:
            _fail(where, f"rule {i} names unknown route {route!r}")
        box = {}
        for name, bounds in r.get("box", {}).items():
            if name not in extents:
                _fail(where, f"rule {i} bounds {name!r}, not one of {list(extents)}")
            lo, hi = bounds
            if type(lo) is not int or lo < 0 or not (hi is None or (type(hi) is int and hi >= lo)):
                _fail(where, f"rule {i}: {name} bounds {bounds!r} are not 0 <= lo <= hi")
            box[name] = (lo, hi)
        # A route that computes correctly only inside some box (kmeans_assign_d64: D <= 64)
        # may serve only rules whose box lies inside it; so the last rule, which bounds
        # nothing, names a route correct for every input the entry accepts.
        for ext, (need_lo, need_hi) in routes.get(route, {}).get("requires", {}).items():
            lo, hi = box.get(ext, (0, None))
            if lo < need_lo or (need_hi is not None and (hi is None or hi > need_hi)):
                _fail(where, f"rule {i} sends {ext} in [{lo}, {hi}] to route {route!r}, "
                             f"which requires {ext} in [{need_lo}, {need_hi}]")
        rules.append(Rule(box, route, r.get("measured", {})))
    if not rules or rules[-1].box:
        _fail(where, "the last rule must have an empty box, so every input has a route")
    return Table(str(raw.get("entry", "")), str(raw.get("target", "")), extents,
                 dict(routes), tuple(rules), dict(raw.get("tuned", {})))


def path(entry: str) -> Path:
    """Where the shipped table of `entry` lives."""
    return SOURCES / f"{entry}_routes.json"


def load(entry: str, file: str | Path | None = None) -> Table:
    """The table of `entry`: `file` when given, else $CAKEC_ROUTES_DIR/<entry>_routes.json
    when that exists (what `cakec tune --out DIR` writes), else the shipped one."""
    import os

    if file is None:
        override = os.environ.get("CAKEC_ROUTES_DIR")
        candidate = Path(override) / f"{entry}_routes.json" if override else None
        file = candidate if candidate is not None and candidate.is_file() else path(entry)
    try:
        raw = json.loads(Path(file).read_text())
    except (OSError, ValueError) as e:
        raise RouteTableError(f"route table {file}: {e}") from None
    return parse(raw, str(file))


#: K parts a split-K route may cut a tile's K range into.
MAX_PARTS = 16


def split_cost_stages(tile: tuple[int, int]) -> float:
    """What a split unit's partial costs beyond its K stages, in 64-deep stages of the
    tile's operands: its f32 tile written and read back by the last CTA (2 · rows · cols · 4
    bytes) over a stage's (rows + cols) · 64 · 2 bytes. A 128×128 partial (64 KiB against
    32 KiB stages) costs 4 stages; the swap-AB 16×64 one (4 KiB against 10 KiB) 0.8."""
    rows, cols = tile
    return rows * cols / (16 * (rows + cols))


def split_parts(tiles: int, k_tiles: int, sms: int, tile: tuple[int, int] = (128, 128),
                waves: bool = False) -> int:
    """How many K parts a split-K route of output tiles `tile` runs for `tiles` of them of
    `k_tiles` 64-deep K stages on `sms` SMs: the S that minimises the persistent grid's
    critical path, waves of units (cdiv(tiles·S, sms)) times the stages of a unit
    (cdiv(k_tiles, S), plus split_cost_stages(tile) when S > 1); the smallest such S. With
    S = 1 the kernel stores its tile directly (no workspace round trip). S > 1 only while
    the units fit one wave (tiles·S <= sms): measured on the H200 (2026-12-01), every split
    into more units than SMs ran slower than S = 1 (1×5120×5120 on the swap-AB tiles at S = 3:
    53.0 µs against 35.9 for the 64×64 skinny tile; 128×5120×5120 on 64×64 tiles at S = 2:
    139 against 37 µs) while single-wave splits won (1×4096×14336 at S = 2: 36.1 against
    cuBLAS's 38.0 µs); the cause is not profiled. With `waves` (a route of its own, which
    the tuner measures against the one-wave routes) S may fill several waves: the same cost
    with the cap at MAX_PARTS and k_tiles only, e.g. 7×11008×4096 on the swap-AB tiles (172
    tiles, 64 stages): S = 3, 4 waves of 22 stages, against S = 1's 2 waves of 64."""
    k_tiles = max(k_tiles, 1)
    extra = split_cost_stages(tile)

    def cost(s: int) -> float:
        return -(-tiles * s // sms) * (-(-k_tiles // s) + (extra if s > 1 else 0))
    most = max(1, min(MAX_PARTS, k_tiles, k_tiles if waves else sms // max(tiles, 1)))
    return min(range(1, most + 1), key=cost)


def tail_parts(tiles: int, k_tiles: int, sms: int, tile: tuple[int, int] = (128, 128)) -> int:
    """How many K parts a tail-split route (`split_k.tail`: its kernel runs the tiles of whole
    waves of SMs unsplit and cuts only the last wave's `tiles % sms` into parts) gives those
    tail tiles: split_parts' one-wave choice for them, 1 when the tiles fill whole waves.
    Below one wave of tiles it is split_parts' choice for all of them (the kernels then run
    as the one-wave split kernels do). E.g. 1×28672×4096 on the swap-AB tiles: 448 tiles,
    3 whole waves and 52 tail tiles in 2 parts (104 units of 32 stages)."""
    tail = tiles % sms if sms > 0 else tiles
    return split_parts(tail, k_tiles, sms, tile) if tail else 1


# ---- the tuner's choice (cakec/kernels/tune.py measures; this decides, without torch)


@dataclass
class Measured:
    shape: tuple[int, ...]
    ms: dict[str, float]        # route -> median ms (routes that computed correctly)
    wrong: dict[str, str]       # route -> why it was refused


def buckets(edges: dict[str, list[int]]) -> list[dict[str, tuple[int, int | None]]]:
    """Every box of the grid the edges cut: per extent, [previous edge + 1, edge] and a
    last open interval."""
    axes = []
    for name, ends in edges.items():
        lows = [0] + [e + 1 for e in ends]
        axes.append([(name, (lo, hi)) for lo, hi in zip(lows, [*ends, None])])
    boxes: list[dict[str, tuple[int, int | None]]] = [{}]
    for axis in axes:
        boxes = [{**box, name: bounds} for box in boxes for name, bounds in axis]
    return boxes


def inside(box: dict[str, tuple[int, int | None]], extents: dict[str, int]) -> bool:
    return Rule(box, "").matches(extents)


def candidates(table: Table, extents: Mapping[str, int]) -> list[str]:
    """The routes worth timing at `extents`: each route's optional `candidate` box (the
    skinny decode tiles are not timed at M = 16384) and `requires` box must hold it."""
    out = []
    for name, spec in table.routes.items():
        boxes = [{k: tuple(v) for k, v in spec.get(key, {}).items()}
                 for key in ("candidate", "requires")]
        if all(inside(box, extents) for box in boxes):
            out.append(name)
    return out


def choose(table: Table, measured: list[Measured],
           extents_of: Callable[[tuple[int, ...]], dict[str, int]],
           edges: dict[str, list[int]], default: str, tuned: Mapping[str, Any]) -> Table:
    """The table rewritten from `measured`: one rule per bucket holding measured shapes
    (the fastest route by geomean over them, a multi-wave split only past WAVES_MARGIN,
    torch only past FALLBACK_MARGIN), then the
    catch-all `default`. A route that failed its check at any shape of a bucket, or was
    not timed there, is out of that bucket."""
    rules = []
    for box in buckets(edges):
        held = [m for m in measured if inside(box, extents_of(m.shape))]
        ok = [r for r in table.routes if held and all(r in m.ms for m in held)]
        if not ok:
            continue
        geo = {r: math.exp(sum(math.log(m.ms[r]) for m in held) / len(held)) for r in ok}
        cake = [r for r in ok if r != TORCH]
        best = min(cake, key=geo.__getitem__) if cake else TORCH
        one_wave = [r for r in cake if not table.split_waves(r)]
        if best != TORCH and table.split_waves(best) and one_wave:
            alt = min(one_wave, key=geo.__getitem__)
            if WAVES_MARGIN * geo[best] > geo[alt]:
                best = alt
        if TORCH in geo and geo[best] > FALLBACK_MARGIN * geo[TORCH]:
            best = TORCH
        note: dict[str, Any] = {"shapes": [list(m.shape) for m in held]}
        if TORCH in geo:
            note["x_torch"] = {r: round(geo[TORCH] / geo[r], 3) for r in ok}
        else:
            note["ms"] = {r: round(geo[r], 5) for r in ok}
        rules.append(Rule(box, best, note))
    rules.append(Rule({}, default))
    return Table(table.entry, table.target, table.extents, table.routes, tuple(rules), tuned)


def adopt(table: Table, measured: list[Measured], extents_of: Callable[[tuple[int, ...]],
          dict[str, int]], new: list[str], tuned: Mapping[str, Any]) -> Table:
    """`table` with its rules kept, except that a route of `new` takes a rule where it was
    faster, by geomean over the measured shapes the rule serves (those it is the first match
    for), than the rule's route in the same measurement, and correct at every one of them
    (the fastest of `new` if several are). The other rules, their routes and boxes, stay as
    they are: a candidate enters a table tuned elsewhere only where it measured better, and
    no bucket moves on one run's noise between the old routes."""
    unknown = [r for r in new if r not in table.routes]
    if unknown:
        _fail("adopt", f"no route {unknown[0]!r} in the table")
    served: dict[int, list[Measured]] = {}
    for m in measured:
        ext = extents_of(m.shape)
        first = next(i for i, rule in enumerate(table.rules) if rule.matches(ext))
        served.setdefault(first, []).append(m)
    rules = []
    for i, rule in enumerate(table.rules):
        held = served.get(i, [])
        ok = [r for r in [rule.route, *new] if held and all(r in m.ms for m in held)]
        if rule.route not in ok:
            rules.append(rule)
            continue
        geo = {r: math.exp(sum(math.log(m.ms[r]) for m in held) / len(held)) for r in ok}
        best = min(ok, key=geo.__getitem__)
        if best == rule.route:
            rules.append(rule)
            continue
        note = {"shapes": [list(m.shape) for m in held], "adopted_over": rule.route,
                "ms": {r: round(geo[r], 5) for r in ok}}
        rules.append(Rule(rule.box, best, note))
    return Table(table.entry, table.target, table.extents, table.routes, tuple(rules),
                 {**table.tuned, "adopted": {"routes": list(new), **tuned}})
