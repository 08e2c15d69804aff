"""The kernel library's portfolio, dispatcher-inclusive: every entry over its shape set, the
timed call being the public API call (route lookup, checks on a new signature, output
allocation and launches included), against the baseline timed side by side in the same
run with CUDA events (cakec.api.time_ms, interleaved rounds).

* gemm: `cakec.kernels.gemm(a, b)` vs `torch.matmul(a, b.t())` over
  cakec.runtime.tuning.GEMM_SHAPES (decode M in {1, 16, 64, 128}, prefill, ragged tails);
  per shape the route taken, ratio, TFLOP/s, and for M <= 128 the achieved GB/s of the
  bytes the product must move against a device-to-device copy measured in the same run.
* kmeans_assign: `cakec.kernels.kmeans_assign(x, c, c_sq)` (||c||² given, as Flash-KMeans'
  `euclid_assign_triton` takes it) vs that Triton kernel over tuning.KMEANS_SHAPES.
* kmeans end to end: `cakec.kernels.kmeans(x, k, iters, init)` vs Flash-KMeans'
  `batch_kmeans_Euclid(x, k, max_iters, tol=-1, init_centroids)` at equal iterations,
  wall time (perf_counter around a synchronised call), median of 3.
Every shape is printed, losses included; then the geomeans and the share of shapes a Cake
route serves.

    python bench/portfolio.py [--only gemm,kmeans,e2e] [--quick] [--out DIR]

--out DIR (default $OUT) writes DIR/portfolio.json, keeping the parts an earlier run with
other --only parts wrote there.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

E2E_SHAPES = [(1, 65536, 256, 128), (8, 16384, 1024, 128), (32, 16384, 256, 64),
              (4, 100000, 1000, 96)]
E2E_ITERS = 10


def geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def copy_gbps() -> float:
    """Device-to-device copy of 1 GiB: read + write bytes per second, in GB/s."""
    import torch

    from cakec.api import time_ms

    src = torch.empty(1 << 29, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    ms = time_ms({"copy": lambda: dst.copy_(src)}, rounds=3, budget_ms=60)["copy"]
    return 2 * src.numel() * 2 / ms / 1e6


def bench_gemm(shapes, out: dict) -> None:
    import torch

    import cakec.kernels as K
    from cakec.api import time_ms
    from cakec.runtime.routes import TORCH

    G = importlib.import_module("cakec.kernels.gemm")  # the package's `gemm` is the function

    torch.backends.cuda.matmul.allow_tf32 = False
    bw = copy_gbps()
    print(f"gemm: cakec.kernels.gemm(a, b) vs torch.matmul(a, b.t()), bf16, table "
          f"{G.table().tuned or 'untuned'}; copy bandwidth {bw:.0f} GB/s")
    print(f"{'M x N x K':>20} {'route':>20} {'ours us':>9} {'torch us':>9} {'x torch':>7} "
          f"{'TFLOP/s':>8} {'GB/s':>6} {'%copy':>5} {'rel_err':>8}")
    rows = []
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
        got = K.gemm(a, b)
        ref = a.float() @ b.float().t()
        err = float((got.float() - ref).norm() / ref.norm())
        del ref, got
        ms = time_ms({"ours": lambda: K.gemm(a, b), "torch": lambda: torch.matmul(a, b.t())},
                     rounds=5, budget_ms=60)
        route = G.route_of(m, n, k)
        moved = 2 * (m * k + n * k + m * n)
        r = {"shape": [m, n, k], "route": route, "cake": route != TORCH, "rel_err": err,
             "ours_ms": ms["ours"], "torch_ms": ms["torch"], "x": ms["torch"] / ms["ours"],
             "tflops": 2 * m * n * k / ms["ours"] / 1e9, "gbps": moved / ms["ours"] / 1e6}
        rows.append(r)
        decode = m <= 128
        print(f"{'x'.join(map(str, r['shape'])):>20} {route:>20} {ms['ours'] * 1e3:9.1f} "
              f"{ms['torch'] * 1e3:9.1f} {r['x']:7.3f} {r['tflops']:8.1f} "
              + (f"{r['gbps']:6.0f} {100 * r['gbps'] / bw:4.0f}%" if decode else f"{'':6} {'':5}")
              + f" {err:8.1e}" + ("  WRONG" if not err < 5e-3 else ""))
    xs = [r["x"] for r in rows]
    dec = [r["x"] for r in rows if r["shape"][0] <= 64]
    served = sum(r["cake"] for r in rows)
    ok = all(r["rel_err"] < 5e-3 for r in rows)
    print(f"gemm: {len(rows)} shapes, geomean {geomean(xs):.3f}x torch, M <= 64 geomean "
          f"{geomean(dec):.3f}x ({len(dec)} shapes), min {min(xs):.3f}x, "
          f"below 0.9x: {sum(x < 0.9 for x in xs)}; a Cake route serves {served}/{len(rows)} "
          f"({100 * served / len(rows):.0f}%); correctness {'ok' if ok else 'FAILED'}")
    out["gemm"] = {"copy_gbps": bw, "rows": rows, "ok": ok}


def _flash_kmeans():
    from kmeans_assign import _flash_kmeans as find

    return find()


def bench_kmeans(shapes, out: dict) -> None:
    import torch

    import cakec.kernels as K
    from cakec.api import load_example, time_ms

    KM = importlib.import_module("cakec.kernels.kmeans")

    fk, note = _flash_kmeans()
    check = load_example(str(ROOT / "examples" / "kmeans_assign.cake")).check
    print(f"kmeans_assign: cakec.kernels.kmeans_assign(x, c, c_sq) vs flash-kmeans "
          f"euclid_assign_triton(x, c, x_sq, c_sq=) {note}")
    print(f"{'B,N,K,D':>22} {'route':>12} {'ours ms':>9} {'triton ms':>9} {'x triton':>8} "
          f"{'bad rows':>8}")
    rows = []
    for b, n, k, d in shapes:
        x = torch.randn(b, n, d, device="cuda").to(torch.bfloat16)
        c = torch.randn(b, k, d, device="cuda").to(torch.bfloat16)
        csq = K.csq_buffer(b, k, "cuda")
        csq.copy_((c.float() ** 2).sum(-1))
        idx, dist = K.kmeans_assign(x, c, csq)
        lim = min(n, 4096)
        bad = sum(sum(check(x[i:i + 1, :lim], c[i:i + 1], idx[i:i + 1, :lim],
                            dist[i:i + 1, :lim]).values()) for i in sorted({0, b - 1}))
        fns = {"ours": lambda: K.kmeans_assign(x, c, csq)}
        if fk is not None:
            x_sq = x.float().pow(2).sum(-1)
            c_sq = c.float().pow(2).sum(-1)
            fk_out = torch.empty(b, n, device="cuda", dtype=torch.int32)
            fns["triton"] = lambda: fk(x, c, x_sq, out=fk_out, c_sq=c_sq)
        ms = time_ms(fns, rounds=3, budget_ms=30)
        r = {"shape": [b, n, k, d], "route": KM.route_of(b, n, k, d), "bad_rows": bad,
             "ours_ms": ms["ours"], "triton_ms": ms.get("triton"),
             "x": ms["triton"] / ms["ours"] if "triton" in ms else None}
        rows.append(r)
        print(f"{','.join(map(str, r['shape'])):>22} {r['route']:>12} {ms['ours']:9.4f} "
              + (f"{ms['triton']:9.4f} {r['x']:8.3f}" if r["x"] else f"{'-':>9} {'-':>8}")
              + f" {bad:8d}")
        torch.cuda.empty_cache()
    xs = [r["x"] for r in rows if r["x"]]
    ok = all(r["bad_rows"] == 0 for r in rows)
    if xs:
        print(f"kmeans_assign: {len(rows)} shapes, geomean {geomean(xs):.3f}x triton, "
              f"min {min(xs):.3f}x, below 1.0x: {sum(x < 1 for x in xs)}; correctness "
              f"{'ok' if ok else 'FAILED'} (float64 check of the first 4096 rows of the "
              "first and last batch)")
    out["kmeans_assign"] = {"rows": rows, "ok": ok, "flash_kmeans": note or "imported"}


def bench_e2e(out: dict) -> None:
    import torch

    import cakec.kernels as K

    try:
        from flash_kmeans import batch_kmeans_Euclid
        why = ""
    except ImportError as e:
        batch_kmeans_Euclid, why = None, f"flash_kmeans.batch_kmeans_Euclid: {e}"
    _flash_kmeans()  # puts the wheel on sys.path when it is not installed
    if batch_kmeans_Euclid is None:
        try:
            from flash_kmeans import batch_kmeans_Euclid
            why = ""
        except ImportError as e:
            why = f"flash_kmeans.batch_kmeans_Euclid not importable: {e}"

    def wall(fn) -> float:
        fn()  # warm-up: compiles, binds, autotunes
        torch.cuda.synchronize()
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(ts)

    print(f"kmeans end to end, {E2E_ITERS} Lloyd iterations from the same initial centroids: "
          f"cakec.kernels.kmeans vs flash-kmeans batch_kmeans_Euclid {why}")
    print(f"{'B,N,K,D':>22} {'ours ms':>9} {'flash ms':>9} {'x flash':>8} "
          f"{'inertia ours/flash':>19}")
    rows = []
    for b, n, k, d in E2E_SHAPES:
        g = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(b, n, d, device="cuda", generator=g).to(torch.bfloat16)
        init = x[:, :k].float().clone()
        ours = wall(lambda: K.kmeans(x, k, iters=E2E_ITERS, init=init))
        c, idx, dist = K.kmeans(x, k, iters=E2E_ITERS, init=init)
        r = {"shape": [b, n, k, d], "ours_ms": ours, "flash_ms": None, "x": None}
        inertia = ""
        if batch_kmeans_Euclid is not None:
            init_bf = init.to(torch.bfloat16)
            flash = wall(lambda: batch_kmeans_Euclid(x, k, max_iters=E2E_ITERS, tol=-1.0,
                                                     init_centroids=init_bf.clone()))
            ids, cent, _ = batch_kmeans_Euclid(x, k, max_iters=E2E_ITERS, tol=-1.0,
                                               init_centroids=init_bf.clone())
            xf = x.float()
            theirs = (xf - cent.float().gather(1, ids.long()[..., None].expand(b, n, d))
                      ).pow(2).sum(-1).sum()
            ratio = float(dist.double().sum() / theirs.double())
            r.update(flash_ms=flash, x=flash / ours, inertia_ratio=ratio)
            inertia = f"{ratio:19.4f}"
        rows.append(r)
        print(f"{','.join(map(str, r['shape'])):>22} {ours:9.2f} "
              + (f"{r['flash_ms']:9.2f} {r['x']:8.3f} {inertia}" if r["x"] else f"{'-':>9}"))
        torch.cuda.empty_cache()
    xs = [r["x"] for r in rows if r["x"]]
    if xs:
        print(f"kmeans end to end: geomean {geomean(xs):.3f}x flash-kmeans, min {min(xs):.3f}x")
    out["kmeans_e2e"] = {"iters": E2E_ITERS, "rows": rows, "flash_kmeans": why or "imported"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="gemm,kmeans,e2e")
    ap.add_argument("--quick", action="store_true", help="every fourth shape only")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for portfolio.json")
    args = ap.parse_args()

    from cakec.runtime.tuning import GEMM_SHAPES, KMEANS_SHAPES

    step = 4 if args.quick else 1
    parts = args.only.split(",")
    out: dict = {}
    if "gemm" in parts:
        bench_gemm(GEMM_SHAPES[::step], out)
    if "kmeans" in parts:
        bench_kmeans(KMEANS_SHAPES[::step], out)
    if "e2e" in parts:
        bench_e2e(out)
    if args.out:
        # merged into what an earlier run with other --only parts wrote there (port25's
        # `--only kmeans` after `--only gemm` into the same $OUT lost the gemm rows)
        path = Path(args.out) / "portfolio.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        earlier = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps({**earlier, **out}, indent=1))
    ok = all(part.get("ok", True) for part in out.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
