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

import time
from pathlib import Path
from typing import Any, Callable

from cakec.runtime import routes, tuning
from cakec.runtime.routes import Measured, candidates
# The shape sets, re-exported for bench/portfolio.py.
from cakec.runtime.tuning import GEMM_SHAPES, KMEANS_SHAPES, gemm_extents  # noqa: F401

GEMM_TOLERANCE = 5e-3   # relative Frobenius error against the float32 product

def _time(fns: dict[str, Callable[[], Any]]) -> dict[str, float]:
    from cakec.api import time_ms

    return time_ms(fns, rounds=5, budget_ms=60)


def measure_gemm(table: routes.Table, shapes: list[tuple[int, int, int]],
                 log: Callable[[str], None]) -> list[Measured]:
    """Every candidate route of every shape checked, then timed as gemm() runs it: its plan
    (cakec.kernels.gemm.plan) called without `out`, so the output's allocation and the
    route's host cost are in every time, torch.matmul's included."""
    import torch

    from cakec.kernels.gemm import plan

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
            run = plan(route, a, b, tab=table)
            # The second call is checked: a split-K route must find its counters at zero
            # again after the first.
            for _ in range(2):
                c.fill_(float("nan"))
                run(a, b, c)
            err = float((c.float() - ref).norm() / ref.norm())
            if not err < GEMM_TOLERANCE:  # NaN (an unwritten element) fails too
                wrong[route] = f"rel err {err:.2e}"
                continue
            fns[route] = (lambda run: lambda: run(a, b, None))(run)
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


MEASURE = {"gemm": measure_gemm, "kmeans_assign": measure_kmeans}


def tune(entry: str, out: Path | None, quick: bool, log: Callable[[str], None],
         adopt: list[str] | None = None) -> Path:
    """Measure every candidate route over the entry's shape set (every fourth shape with
    `quick`), then choose (or, with `adopt`, keep the shipped rules and adopt those routes
    where faster) and write the table and the timings (cakec.runtime.tuning.write); returns
    the table's path."""
    import torch

    table = routes.load(entry, routes.path(entry))
    shapes = tuning.ENTRIES[entry].shapes
    if quick:
        shapes = shapes[::4]
    start = time.perf_counter()
    measured = MEASURE[entry](table, shapes, log)
    tuned = {
        "device": torch.cuda.get_device_name(),
        "command": f"cakec tune {entry}" + (" --quick" if quick else ""),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "seconds": round(time.perf_counter() - start, 1),
        "refused": {"x".join(map(str, m.shape)): m.wrong for m in measured if m.wrong}}
    return tuning.write(entry, table, measured, tuned, out, log, adopt)
