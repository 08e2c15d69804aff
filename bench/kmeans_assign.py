"""examples/kmeans_assign.cake against Flash-KMeans' Triton kernel and naive torch, one process.

For each shape (B, N, K, D): fresh random bf16 X [B, N, D] and C [B, K, D]; our call
(||c||² kernel + assignment kernel, both timed) is checked by distance in float64
(examples/kmeans_assign.py `check`; up to 2^18 rows per shape, see _checked_rows); then ours
(both ways: the whole call, and the assignment kernel alone with ||c||² given, which is how
`euclid_assign_triton` (package flash-kmeans) is timed: its API takes x_sq and c_sq) and the
naive torch version (bmm → distances → argmin) are timed in interleaved rounds with CUDA
events, with a bf16 matmul of the same FLOP count (torch.bmm, cuBLAS) as the rate
reference measured in the same run. Prints ms, TFLOP/s (2·B·N·K·D), ratios and % of the
matmul rate.

    python bench/kmeans_assign.py [--out DIR] [--shapes 0,1,2] [--variants multicast,pingpong]
                                                               (needs torch, an sm_90a GPU)

--variants also checks and times other forms of the assignment kernel beside the shipped
kmeans_assign kernel launched directly, all with ||c||² given, and prints each one's ratio to
it: `multicast` examples/kmeans_assign_mc.cake (2-CTA clusters sharing each centroid tile by
TMA multicast), `pingpong` cakec/kernels/kmeans_assign_pp.cake (the two math warpgroups take
turns on the tensor cores). `--multicast` is `--variants multicast`.

flash-kmeans is imported from the environment or, failing that, from a wheel in .whl/
(../shared/tools/device-wheels flash-kmeans puts it there); without it that column says so.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = [(32, 65536, 1024, 128), (1, 1 << 20, 4096, 128), (8, 65536, 256, 64)]
#: Rows the float64 correctness check covers per shape (see _checked_rows).
CHECK_ROWS = 1 << 18


def _example():
    spec = importlib.util.spec_from_file_location("kmeans_assign_example",
                                                  ROOT / "examples" / "kmeans_assign.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _flash_kmeans():
    """`euclid_assign_triton`, or the reason it is unavailable."""
    try:
        from flash_kmeans.assign_euclid_triton import euclid_assign_triton
        return euclid_assign_triton, ""
    except ImportError as e:
        first = str(e)
    for wheel in sorted((ROOT / ".whl").glob("flash_kmeans-*.whl")):
        sys.path.append(str(wheel))  # a pure-Python wheel imports as a zip
        try:
            from flash_kmeans.assign_euclid_triton import euclid_assign_triton
            return euclid_assign_triton, ""
        except ImportError as e:
            first = f"{first}; from {wheel.name}: {e}"
    return None, f"flash-kmeans not importable ({first})"


def _checked_rows(b: int, n: int) -> list[tuple[int, int, int]]:
    """(batch, first row, end row) pieces the float64 check covers: every row up to
    CHECK_ROWS rows in all, else the first and the last batch's first and last rows (the
    float64 GEMM over every row of the large shapes would take most of the device step;
    test/gpu/test_kmeans_gpu.py checks every row of its ragged shapes)."""
    if b * n <= CHECK_ROWS:
        return [(bi, 0, n) for bi in range(b)]
    half = min(n, CHECK_ROWS // 4)
    return [(bi, r0, r0 + half) for bi in sorted({0, b - 1}) for r0 in sorted({0, n - half})]


#: Variant kernels (--variants) by name: their sources, timed beside the shipped kernel.
VARIANTS = {"multicast": ROOT / "examples" / "kmeans_assign_mc.cake",
            "pingpong": ROOT / "cakec" / "kernels" / "kmeans_assign_pp.cake"}
SHIPPED = "cake kmeans_assign kernel"


def _variant_kernels(names: list[str]):
    """(the shipped kmeans_assign kernel, {contender name: compiled variant}), all sm_90a."""
    import cakec
    from cakec.kernels import build

    return (build.kernel("kmeans_assign", "sm_90a"),
            {f"cake {name} kernel": cakec.compile(VARIANTS[name], target="sm_90a")
             for name in names})


def _check_rows(ex, x, c, idx, dist, b: int, n: int) -> tuple[dict, int]:
    bad, rows = {"choice": 0, "dist": 0}, 0
    for bi, r0, r1 in _checked_rows(b, n):
        part = ex.check(x[bi:bi + 1, r0:r1], c[bi:bi + 1], idx[bi:bi + 1, r0:r1],
                        dist[bi:bi + 1, r0:r1])
        bad = {key: bad[key] + part[key] for key in bad}
        rows += r1 - r0
    return bad, rows


def bench_shape(ex, fk, b: int, n: int, k: int, d: int, variants=None) -> dict:
    import torch

    from cakec.api import time_ms

    x = torch.randn(b, n, d, device="cuda").to(torch.bfloat16)
    c = torch.randn(b, k, d, device="cuda").to(torch.bfloat16)
    csq = ex.csq_buffer(b, k)
    idx = torch.full((b, n), -1, device="cuda", dtype=torch.int32)
    dist = torch.full((b, n), float("nan"), device="cuda", dtype=torch.float32)
    ex.assign(x, c, csq, idx, dist)
    torch.cuda.synchronize()
    bad, rows = _check_rows(ex, x, c, idx, dist, b, n)
    contenders = {"cake": lambda: ex.assign(x, c, csq, idx, dist),
                  # As the Triton kernel is timed: ||c||² given (csq holds it from the call above).
                  GIVEN: lambda: ex.assign(x, c, csq, idx, dist, csq_ready=True)}
    extra: dict = {"variants": {}}
    if variants is not None and d <= 128:
        shipped, kernels = variants
        shipped(x, c, csq, idx, dist, b, n, k)
        contenders[SHIPPED] = lambda: shipped(x, c, csq, idx, dist, b, n, k)
        for name, kernel in kernels.items():
            idx_v = torch.full((b, n), -1, device="cuda", dtype=torch.int32)
            dist_v = torch.full((b, n), float("nan"), device="cuda", dtype=torch.float32)
            kernel(x, c, csq, idx_v, dist_v, b, n, k)
            torch.cuda.synchronize()
            bad_v, _ = _check_rows(ex, x, c, idx_v, dist_v, b, n)
            # Same tiles, same MMAs, same order: the rows must match the shipped kernel's bitwise.
            extra["variants"][name] = {"bad_rows": bad_v, "equal_to_shipped": bool(
                torch.equal(idx_v, idx) and torch.equal(dist_v, dist))}
            contenders[name] = (lambda kernel, i, dv: lambda: kernel(x, c, csq, i, dv, b, n, k))(
                kernel, idx_v, dist_v)
    if fk is not None:
        x_sq = x.float().pow(2).sum(-1)
        c_sq = c.float().pow(2).sum(-1)
        fk_out = torch.empty(b, n, device="cuda", dtype=torch.int32)
        contenders["flash-kmeans triton"] = lambda: fk(x, c, x_sq, out=fk_out, c_sq=c_sq)
    # The naive version materialises B·N·K f32 scores: skip it where that will not fit.
    if b * n * k * 16 < torch.cuda.mem_get_info()[0] * 0.8:
        contenders["torch naive"] = lambda: ex.torch_naive(x, c)
    # The same FLOPs as one bf16 batched matmul (cuBLAS): the rate this run can reach.
    out = torch.empty(b, n, k, device="cuda", dtype=torch.bfloat16)
    ct = c.transpose(1, 2)
    contenders["bf16 bmm (rate ref)"] = lambda: torch.bmm(x, ct, out=out)
    ms = time_ms(contenders, rounds=5, budget_ms=400)
    flop = 2.0 * b * n * k * d
    return {"shape": [b, n, k, d], "bad_rows": bad, "checked_rows": rows, "ms": ms,
            "tflops": {name: flop / t / 1e9 for name, t in ms.items()}, **extra}


#: The contender the Triton kernel is comparable with (both given ||c||²).
GIVEN = "cake, ||c||² given"


def report(rows: list[dict], fk_note: str) -> bool:
    ok = True
    print(f"{'B,N,K,D':>22} {'contender':>22} {'ms':>9} {'TFLOP/s':>8} {'cake x':>7} "
          f"{'given x':>7} {'% bmm':>6}")
    for r in rows:
        ms, tf = r["ms"], r["tflops"]
        rate = tf["bf16 bmm (rate ref)"]
        shape = ",".join(map(str, r["shape"]))
        for name in ms:
            print(f"{shape:>22} {name:>22} {ms[name]:9.4f} {tf[name]:8.1f} "
                  f"{ms[name] / ms['cake']:7.2f} {ms[name] / ms[GIVEN]:7.2f} "
                  f"{100 * tf[name] / rate:5.1f}%")
        bad = r["bad_rows"]
        ok &= bad["choice"] == 0 and bad["dist"] == 0
        print(f"{shape:>22} correctness: {bad['choice']} row(s) with a wrong choice, "
              f"{bad['dist']} with a wrong dist among {r['checked_rows']} checked "
              "(float64, 1e-3 rel / 1e-2 abs)")
        for name, v in r.get("variants", {}).items():
            bad_v, same = v["bad_rows"], v["equal_to_shipped"]
            ok &= bad_v["choice"] == 0 and bad_v["dist"] == 0 and same
            print(f"{shape:>22} {name}: {ms[name]:.4f} ms vs shipped {ms[SHIPPED]:.4f} ms = "
                  f"{ms[SHIPPED] / ms[name]:.3f}x (above 1: the variant is faster); wrong rows "
                  f"{bad_v}; bitwise equal to the shipped kernel: {same}")
    if fk_note:
        print(fk_note)
    print("cake x = contender ms / cake ms (above 1: cake is faster); cake = ||c||² kernel + "
          f"assignment kernel; given x = contender ms / `{GIVEN}` ms (the assignment kernel "
          "alone, timed as the Triton kernel is: ||c||² precomputed)")
    print("correctness:", "ok at every shape" if ok else "FAILED")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for kmeans_assign.json")
    ap.add_argument("--shapes", default="", help="indices into the shape list (default: all)")
    ap.add_argument("--variants", default="",
                    help=f"comma-separated, of {', '.join(VARIANTS)}: also check and time these "
                    "forms of the assignment kernel beside the shipped kernel")
    ap.add_argument("--multicast", action="store_true", help="the same as --variants multicast")
    args = ap.parse_args()

    import torch

    sys.path.insert(0, str(ROOT))
    ex = _example()
    start = time.perf_counter()
    ex.kernels()
    names = [v for v in args.variants.split(",") if v] + ["multicast"] * args.multicast
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        ap.error(f"unknown variant(s) {', '.join(unknown)}; known: {', '.join(VARIANTS)}")
    variants = _variant_kernels(list(dict.fromkeys(names))) if names else None
    compile_s = time.perf_counter() - start
    fk, fk_note = _flash_kmeans()
    picked = [SHAPES[int(i)] for i in args.shapes.split(",") if i] or SHAPES
    print(f"kmeans_assign on {torch.cuda.get_device_name()}, compile {compile_s:.2f} s "
          "(cold or cached), bf16 in, f32 distances, median of CUDA-event timings")
    rows = []
    for shape in picked:
        rows.append(bench_shape(ex, fk, *shape, variants=variants))
        torch.cuda.empty_cache()
    ok = report(rows, fk_note)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "kmeans_assign.json").write_text(json.dumps(
            {"rows": rows, "flash_kmeans": fk_note or "imported", "compile_s": compile_s},
            indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
