"""`fmha` (examples/attention/fmha_fwd_sm90.py: its kernel for each head dim) against torch
SDPA under cuDNN and under FlashAttention-2, on the same fresh random inputs, in one process.

Shapes (issue 14): B·S = 16k tokens and H·D = 2048, S ∈ {1k, 2k, 4k, 8k, 16k}, D ∈ {64, 128},
causal and non-causal, plus grouped-query attention (H_q = 32, H_kv = 8, D = 128, S = 4k).
For each shape: first correctness against the float32 reference (max abs error ≤ 2e-2,
relative Frobenius ≤ 1e-2, lse within 1e-3, no NaN), then the three contenders timed in
interleaved rounds with CUDA events. Prints ms, TFLOP/s (4·B·H·S_q·S_k·D, halved for
causal), ours / cuDNN and ours / FA2, and the share of the 989 TFLOP/s dense bf16 peak.

    python3 bench/fmha.py [--out DIR] [--quick] [--head-dim D ...] [--also D:FILE.cake ...]
                          [--no-alternatives]                       (torch, an sm_90a GPU)

`--also 128:old.cake` times another kernel with the example's parameters (a variant of the
schedule) in the same rounds at the shapes of its head dim, checked like ours, and prints it
in a second table beside ours and cuDNN. The schedules `fmha` does not run at every shape
of a head dim (fmha_fwd_sm90.py `alternatives`: at 128 the one-role, overlap and xt kernels
beside the lazy one `fmha` runs; at 64 all three, since `fmha` picks between two by S_k; and
the head-major and MASK_CANDIDATES kernels) are among them unless --no-alternatives.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PEAK_TFLOPS = 989.0  # dense bf16, H100/H200 SXM
TOKENS, WIDTH = 16384, 2048
MAX_ABS, MAX_REL, MAX_LSE = 2e-2, 1e-2, 1e-3


def example():
    """examples/attention/fmha_fwd_sm90.py, through the example loader `cakec run` uses."""
    from cakec.api import load_example

    return load_example(ROOT / "examples" / "attention" / "fmha_fwd_sm90.cake")


def shapes(quick: bool, dims: tuple[int, ...] = (128, 64)) -> list[dict]:
    """(B, S, H, H_kv, D, causal) rows of the table, at the head dims `dims` (GQA at 128)."""
    rows = []
    seqs = (1024, 4096, 16384) if quick else (1024, 2048, 4096, 8192, 16384)
    for d in dims:
        for causal in (False, True):
            for s in seqs:
                h = WIDTH // d
                rows.append({"B": TOKENS // s, "S": s, "H": h, "HKV": h, "D": d,
                             "causal": causal})
    for causal in (False, True) if 128 in dims else ():
        rows.append({"B": TOKENS // 4096, "S": 4096, "H": 32, "HKV": 8, "D": 128,
                     "causal": causal})
    return rows


def errors(ex, q, k, v, causal: bool, ref: tuple, compiled=None) -> dict:
    """max abs, relative Frobenius and lse errors of ours (or of `compiled`) against `ref`,
    the f32 reference (o, lse)."""
    import torch

    o, lse = ex.launch(compiled, q, k, v, causal)
    ref_o, ref_lse = ref
    of = o.float()
    finite = torch.isfinite(ref_lse)
    return {
        "nan": int(torch.isnan(of).sum()) + int(torch.isnan(lse).sum()),
        "max_abs": float((of - ref_o).abs().max()),
        "rel": float((of - ref_o).norm() / ref_o.norm()),
        "lse": float((lse - ref_lse)[finite].abs().max()) if bool(finite.any()) else 0.0,
        "lse_inf_ok": bool((lse[~finite] == ref_lse[~finite]).all()),
    }


def good(err: dict) -> bool:
    return (err["nan"] == 0 and err["max_abs"] <= MAX_ABS and err["rel"] <= MAX_REL
            and err["lse"] <= MAX_LSE and err["lse_inf_ok"])


def variants(specs: list[str]) -> dict[str, tuple[int, object]]:
    """--also D:FILE.cake → {label: (D, compiled kernel)}."""
    import cakec

    out = {}
    for spec in specs:
        d, _, path = spec.partition(":")
        if not d.isdigit() or not path:
            raise SystemExit(f"--also wants D:FILE.cake, got {spec!r}")
        out[f"{Path(path).stem}@{d}"] = (int(d), cakec.compile(path, target="sm_90a"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for fmha.json")
    ap.add_argument("--quick", action="store_true", help="S ∈ {1k, 4k, 16k} only")
    ap.add_argument("--also", action="append", default=[], metavar="D:FILE.cake",
                    help="another kernel for head dim D, timed and checked beside ours")
    ap.add_argument("--no-alternatives", action="store_true",
                    help="leave out the schedules fmha does not run (e.g. one that faults)")
    ap.add_argument("--head-dim", type=int, action="append", choices=(64, 128),
                    help="only the shapes of this head dim (repeatable; default both)")
    args = ap.parse_args()
    dims = tuple(args.head_dim or (128, 64))

    import torch

    from cakec.api import time_ms

    ex = example()
    for d in ex.KERNELS:
        ex.kernel(d)  # compile outside the timings
    extra = variants(args.also)
    for d in () if args.no_alternatives else dims:
        for other in ex.alternatives(d):
            extra[f"{Path(other).stem}@{d}"] = (d, ex.compiled(other))
    rows, ok = [], True
    for sh in shapes(args.quick, dims):
        b, s, h, h_kv, d, causal = sh["B"], sh["S"], sh["H"], sh["HKV"], sh["D"], sh["causal"]
        q = torch.randn(b, s, h, d, device="cuda").to(torch.bfloat16)
        k = torch.randn(b, s, h_kv, d, device="cuda").to(torch.bfloat16)
        v = torch.randn(b, s, h_kv, d, device="cuda").to(torch.bfloat16)
        ref = ex.reference_fmha(q, k, v, causal)
        err = errors(ex, q, k, v, causal, ref)
        ok &= good(err)
        fns = {"cake": lambda: ex.fmha(q, k, v, causal)}
        var_err = {}
        for label, (vd, compiled) in extra.items():
            if vd == d:
                var_err[label] = errors(ex, q, k, v, causal, ref, compiled)
                ok &= good(var_err[label])
                fns[label] = lambda compiled=compiled: ex.launch(compiled, q, k, v, causal)
        del ref
        for name in ("cudnn", "flash"):
            try:
                ex.sdpa(q, k, v, causal, name)
                fns[name] = lambda name=name: ex.sdpa(q, k, v, causal, name)
            except RuntimeError:  # the backend refuses this shape (e.g. GQA)
                pass
        torch.cuda.synchronize()
        ms = time_ms(fns, rounds=5, budget_ms=60)
        flop = 4.0 * b * h * s * s * d / (2 if causal else 1)
        rows.append(sh | err | {"ok": good(err), "ms": ms, "variants": var_err,
                                "tflops": {n: flop / t / 1e9 for n, t in ms.items()}})
        # One line per shape as soon as it is measured (a later fault keeps these).
        print(f"measured B={b} S={s} H={h} Hkv={h_kv} D={d} causal={causal}: "
              + " ".join(f"{n}={t:.3f}ms" for n, t in ms.items())
              + ("" if good(err) and all(map(good, var_err.values())) else " WRONG"),
              flush=True)
        del q, k, v
    print(f"fmha forward on {torch.cuda.get_device_name()}: B·S = {TOKENS} tokens, bf16, "
          "median of CUDA-event timings; ratios are ours / theirs (> 1: we are faster)")
    print(f"{'B':>3} {'S':>6} {'H':>3} {'Hkv':>3} {'D':>4} {'causal':>6} | {'cake ms':>8} "
          f"{'TFLOP/s':>8} {'%peak':>6} | {'cudnn':>7} {'x':>5} | {'fa2':>7} {'x':>5} | "
          f"{'max_abs':>8} {'rel':>8} {'lse':>8}")
    for r in rows:
        t = r["tflops"]

        def other(name: str) -> str:
            if name not in t:
                return f"{'n/a':>7} {'':>5}"
            return f"{t[name]:7.1f} {t['cake'] / t[name]:5.2f}"

        print(f"{r['B']:3d} {r['S']:6d} {r['H']:3d} {r['HKV']:3d} {r['D']:4d} "
              f"{str(r['causal']):>6} | {r['ms']['cake']:8.3f} {t['cake']:8.1f} "
              f"{100 * t['cake'] / PEAK_TFLOPS:5.1f}% | {other('cudnn')} | {other('flash')} | "
              f"{r['max_abs']:8.2e} {r['rel']:8.2e} {r['lse']:8.2e}"
              + ("" if r["ok"] else "  WRONG"))
    for label in extra:
        print(f"variant {label}: ours / theirs")
        print(f"{'B':>3} {'S':>6} {'H':>3} {'Hkv':>3} {'D':>4} {'causal':>6} | {'ms':>8} "
              f"{'TFLOP/s':>8} | {'x cake':>6} {'x cudnn':>7} | {'max_abs':>8} {'rel':>8}")
        for r in rows:
            if label not in r["variants"]:
                continue
            t, e = r["tflops"], r["variants"][label]
            vs = f"{t[label] / t['cudnn']:7.2f}" if "cudnn" in t else f"{'n/a':>7}"
            print(f"{r['B']:3d} {r['S']:6d} {r['H']:3d} {r['HKV']:3d} {r['D']:4d} "
                  f"{str(r['causal']):>6} | {r['ms'][label]:8.3f} {t[label]:8.1f} | "
                  f"{t[label] / t['cake']:6.2f} {vs} | {e['max_abs']:8.2e} {e['rel']:8.2e}"
                  + ("" if good(e) else "  WRONG"))
    print("correctness:", "ok at every shape" if ok else "FAILED (see WRONG rows)")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "fmha.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "rows": rows, "ok": ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
