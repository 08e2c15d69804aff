"""How far the decode GEMM routes are from the weights' copy speed, and where the rest goes.

For each M <= 64 shape of cakec.runtime.tuning.GEMM_SHAPES whose weights (N·K bf16) take
more than 15 µs to stream, timed side by side in interleaved rounds (cakec.api.time_ms):

* `api`    cakec.kernels.gemm(a, b): the public call, routing and output allocation included;
* `kernel` the routed kernel alone, launched into a preallocated C (gemm.launcher);
* `graph`  that launch replayed 10 times from a CUDA graph, per launch: device time with
           almost no host cost between launches;
* `copy`   a device-to-device copy that moves as many bytes as the kernel must read (N·K
           bf16 read + written, i.e. a copy of N·K bytes), also from a 10-copy graph;
* `torch`  torch.matmul(a, b.t(), out=c) (cuBLAS).

`graph ÷ copy` is the kernel's distance from the copy floor at the same size (ramp and tail
included in both); `kernel - graph` the launch's host and gap cost; `api - kernel` the
dispatcher's. With --ncu ROUTE M N K, one launch of ROUTE at that shape runs between
cudaProfilerStart/Stop for Nsight Compute (`ncu --profile-from-start off ...`), no timing.

    python bench/decode_floor.py [--ncu ROUTE M N K]
"""

from __future__ import annotations

import argparse
import importlib
import sys

#: Shapes whose weights take at least this long at 4.2 TB/s are timed.
MIN_FLOOR_US = 15.0
GRAPH_LAUNCHES = 10


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


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    shapes = [s for s in GEMM_SHAPES if s[0] <= 64 and s[1] * s[2] * 2 / 4.2e6 >= MIN_FLOOR_US]
    print(f"{'M x N x K':>16} {'route':>24} {'api':>6} {'kernel':>6} {'graph':>6} {'copy':>6} "
          f"{'torch':>6} {'copy/graph':>10} {'copy/api':>8} {'GB/s':>5}  (µs)")
    for m, n, k in shapes:
        a, b, c = _inputs(m, n, k)
        c2 = torch.empty_like(c)
        src = torch.empty(n * k // 2, device="cuda", dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        route = G.route_of(m, n, k)
        fns = {"api": lambda: K.gemm(a, b),
               "torch": lambda: torch.matmul(a, b.t(), out=c2),
               "copy": _graph(lambda: dst.copy_(src))}
        if G.table().kernel(route) is not None:
            run = G.launcher(G.table(), route, a, m, n, k)
            fns["kernel"] = lambda: run(a, b, c, m, n, k)
            fns["graph"] = _graph(lambda: run(a, b, c, m, n, k))
        ms = time_ms(fns, rounds=5, budget_ms=40)
        us = {key: v * 1e3 for key, v in ms.items()}
        us["copy"] /= GRAPH_LAUNCHES
        if "graph" in us:
            us["graph"] /= GRAPH_LAUNCHES
        kern, graph = us.get("kernel", float("nan")), us.get("graph", float("nan"))
        print(f"{'x'.join(map(str, (m, n, k))):>16} {route:>24} {us['api']:6.1f} {kern:6.1f} "
              f"{graph:6.1f} {us['copy']:6.1f} {us['torch']:6.1f} {us['copy'] / graph:10.3f} "
              f"{us['copy'] / us['api']:8.3f} {n * k * 2 / graph / 1e3:5.0f}")
        del a, b, c, c2, src, dst, fns
    return 0


if __name__ == "__main__":
    sys.exit(main())
