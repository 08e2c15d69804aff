"""examples/gemm_bf16.cake (wgmma) and examples/gemm_sm80.cake (mma.sync, emitted as sm_80 PTX
and JIT-compiled by the driver) against cuBLAS (torch.matmul) on the same inputs, in one process.

For each shape (M x N x K; C = A . B^T, bf16 in, f32 accumulate, bf16 out): first a
correctness check on fresh random inputs (relative error against an f32 reference, every
output element written), then both contenders timed in interleaved rounds with CUDA events.
Prints a table of TFLOP/s, the ratio, and the share of the H100/H200 dense bf16 peak.

    python3 bench/gemm.py [--out DIR]      (needs torch and an sm_90a GPU)
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for gemm.json")
    args = ap.parse_args()

    import torch

    import cakec
    from cakec.api import time_ms

    torch.backends.cuda.matmul.allow_tf32 = False
    start = time.perf_counter()
    kernel = cakec.compile(str(EXAMPLE), target="sm_90a")
    compile_s = time.perf_counter() - start
    sm80 = sm80_kernel()
    rows, ok = [], True
    for m, n, k in SHAPES:
        err, unwritten = check(kernel, m, n, k)
        ok &= unwritten == 0 and err < TOLERANCE
        err80, unwritten80 = check(sm80, m, n, k)
        ok &= unwritten80 == 0 and err80 < TOLERANCE
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        ms = time_ms({"cake": lambda: kernel(a, b, c, m, n, k),
                      "sm80": lambda: sm80(a, b, c, m, n, k),
                      "torch": lambda: torch.matmul(a, b.t())}, rounds=7, budget_ms=300)
        flop = 2.0 * m * n * k
        rows.append({"shape": [m, n, k], "rel_err": err, "unwritten": unwritten,
                     "cake_tflops": flop / ms["cake"] / 1e9,
                     "sm80_rel_err": err80, "sm80_unwritten": unwritten80,
                     "sm80_tflops": flop / ms["sm80"] / 1e9,
                     "torch_tflops": flop / ms["torch"] / 1e9})
        del a, b, c
    print(f"gemm_bf16 on {torch.cuda.get_device_name()}, compile {compile_s:.2f} s "
          f"(cold or cached), C = A . B^T bf16, median of CUDA-event timings; sm80 = "
          "gemm_sm80.cake as sm_80 PTX (mma.sync, no wgmma/TMA)")
    print(f"{'M x N x K':>20} {'cake':>8} {'torch':>8} {'ratio':>6} {'% peak':>7} {'rel_err':>9}"
          f" | {'sm80':>8} {'ratio':>6} {'rel_err':>9}")
    for r in rows:
        ratio = r["cake_tflops"] / r["torch_tflops"]
        ratio80 = r["sm80_tflops"] / r["torch_tflops"]
        print(f"{'x'.join(map(str, r['shape'])):>20} {r['cake_tflops']:8.1f} "
              f"{r['torch_tflops']:8.1f} {ratio:6.3f} {100 * r['cake_tflops'] / PEAK_TFLOPS:6.1f}% "
              f"{r['rel_err']:9.2e} | {r['sm80_tflops']:8.1f} {ratio80:6.3f} "
              f"{r['sm80_rel_err']:9.2e}"
              + ("" if not r["unwritten"] else f"  {r['unwritten']} UNWRITTEN")
              + ("" if not r["sm80_unwritten"] else f"  {r['sm80_unwritten']} SM80 UNWRITTEN"))
    print("correctness:", "ok at every shape" if ok else "FAILED (see rel_err / UNWRITTEN)")
    if args.out:
        Path(args.out, "gemm.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "rows": rows, "ok": ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
