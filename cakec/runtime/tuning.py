"""What `cakec tune` tunes, and how a table is chosen and written from timings, in pure
Python (no torch, no GPU): each entry's shape set (the sets bench/portfolio.py reports), the
extents its rules bound, the bucket edges and the catch-all route; the timings file
(`<entry>_measured.json`) written beside a tuned table, from which `cakec tune --measured`
chooses the rules again without timing anything. cakec/kernels/tune.py does the timing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cakec.runtime import routes
from cakec.runtime.routes import Measured, choose


def gemm_extents(m: int, n: int, k: int) -> dict[str, int]:
    """What gemm's rules may bound: the extents, and the two alignments that change which
    kernel is fastest (measured: K % 64 != 0 costs our TMA loads, N % 8 != 0 cuBLAS)."""
    return {"m": m, "n": n, "k": k, "k_mod64": k % 64, "n_mod8": n % 8}


_LLM_NK = [(4096, 4096), (28672, 4096), (4096, 14336), (8192, 8192), (5120, 5120),
           (8192, 28672)]
#: gemm's shape set (M, N, K): decode, prefill, and ragged tails (K % 8 == 0, TMA's rule).
GEMM_SHAPES: list[tuple[int, int, int]] = (
    [(m, n, k) for m in (1, 16, 64, 128) for n, k in _LLM_NK]
    + [(256, 4096, 14336), (512, 4096, 4096), (512, 14336, 4096), (1024, 4096, 4096),
       (1024, 8192, 8192), (2048, 4096, 4096), (2048, 28672, 4096), (4096, 4096, 4096),
       (4096, 14336, 4096), (8192, 8192, 8192), (8192, 4096, 14336), (16384, 4096, 4096),
       (16384, 8192, 8192)]
    + [(3, 4000, 4104), (7, 11008, 4096), (33, 5000, 2056), (100, 3000, 1000),
       (200, 14336, 4096), (333, 5000, 2056), (1000, 1000, 1000), (2049, 4097, 4096),
       (3000, 3000, 3000), (5000, 7000, 1992)])
#: gemm's buckets: M intervals (their upper ends) × N intervals × K up to 8192 or longer × K a
#: multiple of 64 or not × N a multiple of 8 or not. N and K are cut where the fastest route
#: changed in the H200's timings (2026-12-01, `cakec tune --measured` over them): at M = 1
#: the swap-AB split took 1×8192×8192 in 38.4 µs against 54.4 for the 64×64 skinny tile but
#: 1×5120×5120 in 53.0 against 35.9, so N = 5120 has its own interval; N = 11008..16384
#: apart from 28672; long K (14336, 28672) apart, where a split pays at few tiles.
GEMM_EDGES = {"m": [1, 16, 64, 128, 256, 512, 1024, 2048, 4096],
              "n": [4096, 5120, 8192, 16384], "k": [8192], "k_mod64": [0], "n_mod8": [0]}

#: kmeans_assign's shape set (B, N, K, D), small to large, D in {64, 96, 128}.
KMEANS_SHAPES: list[tuple[int, int, int, int]] = [
    (b, n, k, d) for d in (64, 96, 128)
    for b, n in ((1, 4096), (1, 65536), (1, 262144), (8, 8192), (8, 65536), (32, 16384),
                 (32, 65536))
    for k in (16, 256, 1024) if b * n * k <= 1 << 31] + [
    (1, 1 << 20, 4096, 128), (32, 65536, 1024, 128), (4, 100000, 1000, 96),
    (3, 1000, 300, 64), (16, 5000, 77, 128)]
KMEANS_EDGES = {"rows": [8192, 33792, 131072, 524288], "d": [64], "k": [32]}


@dataclass(frozen=True)
class Entry:
    shapes: list[tuple[int, ...]]
    extents_of: Callable[[tuple[int, ...]], dict[str, int]]
    edges: dict[str, list[int]]
    default: str          # the catch-all rule's route: correct for every input


ENTRIES = {
    "gemm": Entry(GEMM_SHAPES, lambda s: gemm_extents(*s), GEMM_EDGES,  # type: ignore[arg-type]
                  "persistent_128x256"),
    "kmeans_assign": Entry(KMEANS_SHAPES,  # type: ignore[arg-type]
                           lambda s: {"rows": s[0] * s[1], "k": s[2], "d": s[3]},
                           KMEANS_EDGES, "rows256"),
}


def measured_path(table_path: Path) -> Path:
    """Where the timings behind a written table go: beside it, `<entry>_measured.json`."""
    return table_path.with_name(table_path.name.replace("_routes.json", "_measured.json"))


def load_measured(path: Path, entry: str) -> tuple[dict[str, Any], list[Measured]]:
    """The metadata and timings of a `_measured.json` file that `cakec tune` wrote."""
    try:
        raw = json.loads(path.read_text())
        if raw.get("entry") != entry:
            raise ValueError(f"holds timings of {raw.get('entry')!r}, not {entry!r}")
        return dict(raw["tuned"]), [Measured(tuple(r["shape"]), dict(r["ms"]),
                                             dict(r["wrong"])) for r in raw["shapes"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise routes.RouteTableError(f"timings {path}: {e}") from None


def write(entry: str, table: routes.Table, measured: list[Measured], tuned: dict[str, Any],
          out: Path | None, log: Callable[[str], None], adopt: list[str] | None = None
          ) -> Path:
    """Choose `table`'s rules from `measured` (routes.choose over the entry's buckets; with
    `adopt`, routes.adopt: `table`'s rules kept, those routes taking the rules where they
    measured faster), write the table (to `out`, a folder or a .json path; default: the
    shipped table's path) and the timings beside it, log the route chosen per bucket;
    returns the table's path."""
    spec = ENTRIES[entry]
    if adopt:
        chosen = routes.adopt(table, measured, spec.extents_of, adopt, tuned)
    else:
        chosen = choose(table, measured, spec.extents_of, spec.edges, spec.default, tuned)
    routes.parse(chosen.to_json())  # what is written must load again
    if out is None:
        target = routes.path(entry)
    else:
        target = out / f"{entry}_routes.json" if out.is_dir() or not out.suffix else out
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(chosen.to_json(), indent=1) + "\n")
    measured_path(target).write_text(json.dumps({"entry": entry, "tuned": tuned, "shapes": [
        {"shape": list(m.shape), "ms": m.ms, "wrong": m.wrong} for m in measured]},
        indent=1) + "\n")
    for rule in chosen.rules:
        box = " ".join(f"{n}∈[{lo},{'∞' if hi is None else hi}]" for n, (lo, hi) in
                       rule.box.items()) or "everything else"
        gain = rule.measured.get("x_torch", {}).get(rule.route)
        was = rule.measured.get("adopted_over")
        log(f"{box:<40} -> {rule.route}" + (f"  ({gain:.3f}x torch)" if gain else "")
            + (f"  (adopted over {was}: {rule.measured['ms']} ms)" if was else ""))
    return target


def rechoose(entry: str, measured_file: Path, out: Path | None,
             log: Callable[[str], None], adopt: list[str] | None = None) -> Path:
    """`cakec tune --measured FILE [--adopt ROUTES]`: the rules chosen again from saved
    timings (after a change of the buckets or of the routes' candidate boxes), or the
    shipped rules with ROUTES adopted where those timings say they are faster; nothing
    timed."""
    tuned, measured = load_measured(measured_file, entry)
    tuned["chosen_from"] = measured_file.name
    return write(entry, routes.load(entry, routes.path(entry)), measured, tuned, out, log,
                 adopt)
