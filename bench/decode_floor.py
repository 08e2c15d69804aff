"""How far the decode GEMM routes are from the weights' copy speed, and where the rest goes:
host or device, ours or cuBLAS's.

For each M <= 64 shape of cakec.runtime.tuning.GEMM_SHAPES whose weights (N·K bf16) take
at least --min-floor-us to stream at 4.2 TB/s (default 15; 0 takes all of them), timed side
by side in interleaved rounds (cakec.api.time_ms, a CUDA event pair around each call):

* `api`    cakec.kernels.gemm(a, b): the public call, routing and output allocation included;
* `kernel` the routed kernel alone, launched into a preallocated C (gemm.launcher);
* `graph`  that launch replayed 10 times from a CUDA graph, per launch: device time with
           almost no host cost between launches;
* `torch`  torch.matmul(a, b.t(), out=c) (cuBLAS), and `tgraph` the same from a 10-call graph;
* `fix`    the routed kernel at the same M and N but K = 64 (one K stage) from a 10-launch
           graph, and `tfix` cuBLAS likewise: the device's cost per launch that does not grow
           with the bytes (launch, prologue, first loads, epilogue, drain);
* `copy`   a device-to-device copy that moves as many bytes as the kernel must read (N·K
           bf16 read + written, i.e. a copy of N·K bytes), also from a 10-copy graph.

`graph - tgraph` is ours against cuBLAS on the device alone, `fix - tfix` the part of it that
does not depend on K; `api - graph` and `torch - tgraph` what the host and the launch add to
each contender in the event-timed measurement (the portfolio's and the tuner's). With --ncu
ROUTE M N K, one launch of ROUTE at that shape runs between cudaProfilerStart/Stop for Nsight
Compute (`ncu --profile-from-start off ...`), no timing.

    python bench/decode_floor.py [--min-floor-us US] [--json PATH] [--ncu ROUTE M N K]
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys

GRAPH_LAUNCHES = 10
#: The K of the fixed-cost launches: one 64-deep stage (every route takes it, test/gpu).
FIX_K = 64


def _graph(fn):
    """`fn` GRAPH_LAUNCHES times in one CUDA graph (captured after a warm-up call), as a
    callable replaying it."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(GRAPH_LAUNCHES):
            fn()
    return g.replay


def _inputs(m: int, n: int, k: int):
    import torch

    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    return a, b, torch.empty(m, n, device="cuda", dtype=torch.bfloat16)


def ncu(route: str, m: int, n: int, k: int) -> None:
    import torch

    G = importlib.import_module("cakec.kernels.gemm")
    a, b, c = _inputs(m, n, k)
    run = G.launcher(G.table(), route, a, m, n, k)
    for _ in range(3):
        run(a, b, c, m, n, k)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    run(a, b, c, m, n, k)
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()


def _fns(G, K, route: str, m: int, n: int, k: int) -> dict:
    """The contenders at one shape (each keeps its own tensors alive in its closure)."""
    import torch

    a, b, c = _inputs(m, n, k)
    c2 = torch.empty_like(c)
    src = torch.empty(n * k // 2, device="cuda", dtype=torch.bfloat16)
    dst = torch.empty_like(src)
    a64, b64, c64 = _inputs(m, n, FIX_K)
    fns = {"api": lambda: K.gemm(a, b),
           "torch": lambda: torch.matmul(a, b.t(), out=c2),
           "tgraph": _graph(lambda: torch.matmul(a, b.t(), out=c2)),
           "tfix": _graph(lambda: torch.matmul(a64, b64.t(), out=c64)),
           "copy": _graph(lambda: dst.copy_(src))}
    if G.table().kernel(route) is not None:
        run = G.launcher(G.table(), route, a, m, n, k)
        run64 = G.launcher(G.table(), route, a64, m, n, FIX_K)
        fns["kernel"] = lambda: run(a, b, c, m, n, k)
        fns["graph"] = _graph(lambda: run(a, b, c, m, n, k))
        fns["fix"] = _graph(lambda: run64(a64, b64, c64, m, n, FIX_K))
    return fns


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--min-floor-us", type=float, default=15.0,
                   help="time the shapes whose weights take at least this long at 4.2 TB/s")
    p.add_argument("--json", help="also write the rows here")
    p.add_argument("--ncu", nargs=4, metavar=("ROUTE", "M", "N", "K"))
    args = p.parse_args()
    if args.ncu:
        ncu(args.ncu[0], *map(int, args.ncu[1:]))
        return 0
    import torch

    import cakec.kernels as K
    from cakec.api import time_ms
    from cakec.runtime.tuning import GEMM_SHAPES

    G = importlib.import_module("cakec.kernels.gemm")
    torch.backends.cuda.matmul.allow_tf32 = False
    shapes = [s for s in GEMM_SHAPES
              if s[0] <= 64 and s[1] * s[2] * 2 / 4.2e6 >= args.min_floor_us]
    cols = ("api", "kernel", "graph", "torch", "tgraph", "fix", "tfix", "copy")
    print(f"{torch.cuda.get_device_name()}; µs per call; graph columns per launch of a "
          f"{GRAPH_LAUNCHES}-launch graph; fix/tfix at K = {FIX_K}")
    print(f"{'M x N x K':>16} {'route':>24} " + " ".join(f"{c:>6}" for c in cols)
          + f" {'g-tg':>6} {'fx-tfx':>6} {'api-g':>6} {'tor-tg':>6} {'GB/s':>5}")
    rows = []
    for m, n, k in shapes:
        route = G.route_of(m, n, k)
        ms = time_ms(_fns(G, K, route, m, n, k), rounds=5, budget_ms=40)
        us = {c: ms[c] * 1e3 / (GRAPH_LAUNCHES if c in ("graph", "tgraph", "fix", "tfix", "copy")
                                else 1) if c in ms else math.nan for c in cols}
        d = {"g-tg": us["graph"] - us["tgraph"], "fx-tfx": us["fix"] - us["tfix"],
             "api-g": us["api"] - us["graph"], "tor-tg": us["torch"] - us["tgraph"]}
        rows.append({"shape": [m, n, k], "route": route, "us": us, "diff": d})
        print(f"{'x'.join(map(str, (m, n, k))):>16} {route:>24} "
              + " ".join(f"{us[c]:6.1f}" for c in cols)
              + " " + " ".join(f"{v:6.1f}" for v in d.values())
              + f" {n * k * 2 / us['graph'] / 1e3:5.0f}")
        torch.cuda.synchronize()
    for key in ("g-tg", "fx-tfx", "api-g", "tor-tg"):
        vals = [r["diff"][key] for r in rows if not math.isnan(r["diff"][key])]
        if vals:
            print(f"mean {key}: {sum(vals) / len(vals):.2f} µs over {len(vals)} shapes")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
