"""examples/gemm_bf16.cake (wgmma, two consumer warpgroups sharing each 128×256 tile),
examples/gemm_bf16_pingpong.cake (the ping-pong schedule: each warpgroup its own 128×128 tiles)
and examples/gemm_sm80.cake (mma.sync, emitted as sm_80 PTX and JIT-compiled by the driver)
against cuBLAS (torch.matmul) on the same inputs, in one process.

For each shape (M x N x K; C = A . B^T, bf16 in, f32 accumulate, bf16 out): first a
correctness check on fresh random inputs (relative error against an f32 reference, every
output element written), then both contenders timed in interleaved rounds with CUDA events.
Prints a table of TFLOP/s, the ratio, and the share of the H100/H200 dense bf16 peak.

    python3 bench/gemm.py [--out DIR] [--kernel PATH ...] [--no-sm80]

(needs torch and an sm_90a GPU). `--kernel` adds another schedule with gemm_bf16's
parameters (a variant being tuned), checked and timed in the same interleaved rounds: a .cake
file, or a .cubin with its launch metadata beside it as .json (`cakec emit --emit cubin` and
`--emit metadata`, e.g. from another commit's compiler, to compare code generators).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gemm_bf16.cake"
PINGPONG = ROOT / "examples" / "gemm_bf16_pingpong.cake"
SM80_EXAMPLE = ROOT / "examples" / "gemm_sm80.py"
SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 28672), (4096, 14336, 4096)]
PEAK_TFLOPS = 989.0  # dense bf16, H100/H200 SXM
TOLERANCE = 5e-3


def check(kernel, m: int, n: int, k: int) -> tuple[float, int]:
    """(relative error, unwritten elements) on fresh inputs with a NaN-poisoned C."""
    import torch

    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, c, m, n, k)
    torch.cuda.synchronize()
    ref = a.float() @ b.float().t()
    unwritten = int(torch.isnan(c).sum())
    err = float((c.float() - ref).norm() / ref.norm())
    return err, unwritten


def sm80_kernel():
    """examples/gemm_sm80.cake as sm_80 PTX (its sibling module builds the Kernel)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("gemm_sm80", SM80_EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ptx_kernel()


def load_kernel(path: str):
    """A .cake compiled for sm_90a, or a prebuilt .cubin with its .json metadata."""
    import cakec
    from cakec.runtime import Kernel

    if path.endswith(".cubin"):
        meta = json.loads(Path(path).with_suffix(".json").read_text())
        return Kernel(Path(path).read_bytes(), meta)
    return cakec.compile(path, target="sm_90a")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for gemm.json")
    ap.add_argument("--kernel", action="append", default=[], metavar="PATH",
                    help="another .cake schedule with gemm_bf16's parameters")
    ap.add_argument("--no-sm80", action="store_true", help="leave out the sm_80 PTX kernel")
    args = ap.parse_args()

    import torch

    import cakec
    from cakec.api import time_ms

    torch.backends.cuda.matmul.allow_tf32 = False
    start = time.perf_counter()
    ours = {"cake": cakec.compile(str(EXAMPLE), target="sm_90a")}
    compile_s = time.perf_counter() - start
    ours["pingpong"] = cakec.compile(str(PINGPONG), target="sm_90a")
    ours |= {Path(p).stem: load_kernel(p) for p in args.kernel}
    if not args.no_sm80:
        ours["sm80"] = sm80_kernel()
    rows, ok = [], True
    for m, n, k in SHAPES:
        checks = {name: check(kernel, m, n, k) for name, kernel in ours.items()}
        ok &= all(unwritten == 0 and err < TOLERANCE for err, unwritten in checks.values())
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        fns = {name: (lambda f=kernel: f(a, b, c, m, n, k)) for name, kernel in ours.items()}
        ms = time_ms(fns | {"torch": lambda: torch.matmul(a, b.t())}, rounds=7, budget_ms=300)
        flop = 2.0 * m * n * k
        rows.append({"shape": [m, n, k], "tflops": {c: flop / t / 1e9 for c, t in ms.items()},
                     "rel_err": {name: e for name, (e, _) in checks.items()},
                     "unwritten": {name: u for name, (_, u) in checks.items()}})
        del a, b, c
    print(f"gemm_bf16 on {torch.cuda.get_device_name()}, compile {compile_s:.2f} s "
          f"(cold or cached), C = A . B^T bf16, median of CUDA-event timings; ratio = ours / "
          "torch; sm80 = gemm_sm80.cake as sm_80 PTX (mma.sync, no wgmma/TMA)")
    head = f"{'M x N x K':>20} {'torch':>8}"
    for name in ours:
        head += f" | {name:>14} {'ratio':>6} {'% peak':>7} {'rel_err':>9}"
    print(head)
    for r in rows:
        t = r["tflops"]
        line = f"{'x'.join(map(str, r['shape'])):>20} {t['torch']:8.1f}"
        for name in ours:
            line += (f" | {t[name]:14.1f} {t[name] / t['torch']:6.3f} "
                     f"{100 * t[name] / PEAK_TFLOPS:6.1f}% {r['rel_err'][name]:9.2e}")
            if r["unwritten"][name]:
                line += f" {r['unwritten'][name]} UNWRITTEN"
        print(line)
    print("correctness:", "ok at every shape" if ok else "FAILED (see rel_err / UNWRITTEN)")
    if args.out:
        Path(args.out, "gemm.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "rows": rows, "ok": ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
