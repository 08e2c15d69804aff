"""`cakec tune ENTRY`: time every candidate route of a library entry on this GPU over its
shape set, and rewrite the entry's route table (cakec/runtime/routes.py) from the
timings: per bucket of shapes, the route with the best geometric-mean time over the
bucket's shapes; the entry's torch equivalent takes a bucket only where it beats every
Cake route there by more than routes.FALLBACK_MARGIN. Every candidate is checked against a
float32 (gemm) or float64 (kmeans_assign) reference before it is timed; a candidate that
computes wrongly is reported and never chosen. Needs torch and an sm_90 GPU.

The shape sets are the ones bench/portfolio.py reports, so the table is tuned on the
shapes it is judged on; the buckets are coarse (M ranges for gemm, B·N ranges for
kmeans_assign), so a shape between the measured ones inherits its bucket's route.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Callable

from cakec.runtime import routes
from cakec.runtime.routes import Measured, candidates, choose

GEMM_TOLERANCE = 5e-3   # relative Frobenius error against the float32 product

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
#: gemm's buckets: M intervals (their upper ends) × N intervals × K a multiple of 64 or not ×
#: N a multiple of 8 or not. N = 4096 apart from 5120..8192: at M = 128 the skinny tile took
#: 128×4096×4096 in 25.2 µs against cuBLAS's 33.0 but lost the bucket it shared with N = 5120
#: and 8192 (H200, 2026-12-01).
GEMM_EDGES = {"m": [1, 16, 64, 128, 256, 512, 1024, 2048, 4096], "n": [4096, 8192],
              "k_mod64": [0], "n_mod8": [0]}

#: kmeans_assign's shape set (B, N, K, D), small to large, D in {64, 96, 128}.
KMEANS_SHAPES: list[tuple[int, int, int, int]] = [
    (b, n, k, d) for d in (64, 96, 128)
    for b, n in ((1, 4096), (1, 65536), (1, 262144), (8, 8192), (8, 65536), (32, 16384),
                 (32, 65536))
    for k in (16, 256, 1024) if b * n * k <= 1 << 31] + [
    (1, 1 << 20, 4096, 128), (32, 65536, 1024, 128), (4, 100000, 1000, 96),
    (3, 1000, 300, 64), (16, 5000, 77, 128)]
KMEANS_EDGES = {"rows": [8192, 33792, 131072, 524288], "d": [64], "k": [32]}


def _time(fns: dict[str, Callable[[], Any]]) -> dict[str, float]:
    from cakec.api import time_ms

    return time_ms(fns, rounds=5, budget_ms=60)


def gemm_extents(m: int, n: int, k: int) -> dict[str, int]:
    from cakec.kernels.gemm import extents

    return extents(m, n, k)


def measure_gemm(table: routes.Table, shapes: list[tuple[int, int, int]],
                 log: Callable[[str], None]) -> list[Measured]:
    import torch

    from cakec.kernels.gemm import launcher

    torch.backends.cuda.matmul.allow_tf32 = False
    out: list[Measured] = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        ref = a.float() @ b.float().t()
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        fns: dict[str, Callable[[], Any]] = {}
        wrong: dict[str, str] = {}
        for route in candidates(table, gemm_extents(m, n, k)):
            kname = table.kernel(route)
            if kname is None:
                fns[route] = lambda: torch.matmul(a, b.t(), out=c)
                continue
            kern = launcher(table, route, a, m, n, k)
            # The second launch is checked: a split-K route must find its counters at zero
            # again after the first.
            for _ in range(2):
                c.fill_(float("nan"))
                kern(a, b, c, m, n, k)
            err = float((c.float() - ref).norm() / ref.norm())
            if not err < GEMM_TOLERANCE:  # NaN (an unwritten element) fails too
                wrong[route] = f"rel err {err:.2e}"
                continue
            fns[route] = (lambda kern: lambda: kern(a, b, c, m, n, k))(kern)
        ms = _time(fns)
        out.append(Measured((m, n, k), ms, wrong))
        log(f"{m}x{n}x{k}: " + ", ".join(f"{r} {t * 1e3:.1f} us" for r, t in ms.items())
            + "".join(f", {r} WRONG ({why})" for r, why in wrong.items()))
    return out


def measure_kmeans(table: routes.Table, shapes: list[tuple[int, int, int, int]],
                   log: Callable[[str], None]) -> list[Measured]:
    import torch

    from cakec.api import load_example
    from cakec.kernels import build, csq_buffer

    check = load_example(str(Path(__file__).resolve().parents[2] / "examples" /
                             "kmeans_assign.cake")).check
    out: list[Measured] = []
    for b, n, k, d in shapes:
        x = torch.randn(b, n, d, device="cuda").to(torch.bfloat16)
        c = torch.randn(b, k, d, device="cuda").to(torch.bfloat16)
        csq = csq_buffer(b, k, "cuda")
        csq.copy_((c.float() ** 2).sum(-1))
        idx = torch.empty(b, n, device="cuda", dtype=torch.int32)
        dist = torch.empty(b, n, device="cuda", dtype=torch.float32)
        rows = min(n, 4096)  # the float64 check on the first rows of the first and last batch
        fns: dict[str, Callable[[], Any]] = {}
        wrong: dict[str, str] = {}
        for route in candidates(table, {"rows": b * n, "k": k, "d": d}):
            kern = build.kernel(table.kernel(route), table.target)
            dist.fill_(float("nan"))
            kern(x, c, csq, idx, dist, b, n, k)
            bad = [check(x[i:i + 1, :rows], c[i:i + 1], idx[i:i + 1, :rows],
                         dist[i:i + 1, :rows]) for i in sorted({0, b - 1})]
            if any(v for part in bad for v in part.values()):
                wrong[route] = f"{bad}"
                continue
            fns[route] = (lambda kern: lambda: kern(x, c, csq, idx, dist, b, n, k))(kern)
        ms = _time(fns)
        out.append(Measured((b, n, k, d), ms, wrong))
        log(f"{b},{n},{k},{d}: " + ", ".join(f"{r} {t:.4f} ms" for r, t in ms.items())
            + "".join(f", {r} WRONG ({why})" for r, why in wrong.items()))
    return out


ENTRIES = {
    "gemm": (measure_gemm, GEMM_SHAPES, lambda s: gemm_extents(*s), GEMM_EDGES,
             "persistent_128x256"),
    "kmeans_assign": (measure_kmeans, KMEANS_SHAPES,
                      lambda s: {"rows": s[0] * s[1], "k": s[2], "d": s[3]}, KMEANS_EDGES,
                      "rows256"),
}


def measured_path(table_path: Path) -> Path:
    """Where the timings behind a written table go: beside it, `<entry>_measured.json`."""
    return table_path.with_name(table_path.name.replace("_routes.json", "_measured.json"))


def save_measured(path: Path, entry: str, tuned: dict[str, Any],
                  measured: list[Measured]) -> None:
    path.write_text(json.dumps({"entry": entry, "tuned": tuned, "shapes": [
        {"shape": list(m.shape), "ms": m.ms, "wrong": m.wrong} for m in measured]},
        indent=1) + "\n")


def load_measured(path: Path, entry: str) -> tuple[dict[str, Any], list[Measured]]:
    """A `_measured.json` file that `cakec tune` wrote: its metadata and timings."""
    try:
        raw = json.loads(path.read_text())
        if raw.get("entry") != entry:
            raise ValueError(f"holds timings of {raw.get('entry')!r}, not {entry!r}")
        return dict(raw["tuned"]), [Measured(tuple(r["shape"]), dict(r["ms"]),
                                             dict(r["wrong"])) for r in raw["shapes"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise routes.RouteTableError(f"timings {path}: {e}") from None


def tune(entry: str, out: Path | None, quick: bool, log: Callable[[str], None],
         measured_file: Path | None = None) -> Path:
    """Measure, choose, write the table (to `out`, a folder or a .json path; default: the
    shipped table's path) and the timings beside it (`measured_path`), and log the chosen
    route per bucket; returns the table's path. With `measured_file` nothing is timed: the
    rules are chosen again from those saved timings (no GPU needed), e.g. after a change
    of the buckets."""
    measure, shapes, extents_of, edges, default = ENTRIES[entry]
    table = routes.load(entry, routes.path(entry))
    if measured_file is not None:
        tuned, measured = load_measured(measured_file, entry)
        tuned["chosen_from"] = measured_file.name
    else:
        import torch

        if quick:
            shapes = shapes[::4]
        start = time.perf_counter()
        measured = measure(table, shapes, log)
        tuned = {
            "device": torch.cuda.get_device_name(),
            "command": f"cakec tune {entry}" + (" --quick" if quick else ""),
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "seconds": round(time.perf_counter() - start, 1),
            "refused": {"x".join(map(str, m.shape)): m.wrong for m in measured if m.wrong}}
    chosen = choose(table, measured, extents_of, edges, default, tuned)
    routes.parse(chosen.to_json())  # what is written must load again
    if out is None:
        target = routes.path(entry)
    else:
        target = out / f"{entry}_routes.json" if out.is_dir() or not out.suffix else out
        target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(chosen.to_json(), indent=1) + "\n")
    if measured_file is None or measured_path(target) != measured_file.resolve():
        save_measured(measured_path(target), entry, tuned, measured)
    for rule in chosen.rules:
        box = " ".join(f"{n}∈[{lo},{'∞' if hi is None else hi}]" for n, (lo, hi) in
                       rule.box.items()) or "everything else"
        gain = rule.measured.get("x_torch", {}).get(rule.route)
        log(f"{box:<40} -> {rule.route}" + (f"  ({gain:.3f}x torch)" if gain else ""))
    return target
