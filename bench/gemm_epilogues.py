"""The fused-epilogue GEMM examples (issue 13) against their baselines, side by side in one
process: examples/gemm_bias_gelu.cake vs the unfused torch pair (F.linear, then F.gelu tanh)
and vs our plain examples/gemm_bf16.cake; examples/gemm_fp8.cake vs torch._scaled_mm
(cuBLASLt FP8, the same row-wise scales); examples/gemm_residual.cake vs torch.addmm and vs
our plain GEMM. All three are ping-pong schedules (each consumer warpgroup its own tiles); their
cooperative schedules (gemm_bias_gelu_cooperative.cake, gemm_fp8_cooperative.cake: both
warpgroups on one tile; gemm_residual_cooperative.cake, which also reads R from global memory)
and the SMEM-staged ones (gemm_bias_gelu_staged.cake, gemm_fp8_staged.cake,
gemm_residual_staged.cake: C copied out by TMA) are always timed beside them, each in its own table, and so is the library op that picks a schedule by shape
(`cakec.kernels.gemm_bias_gelu`, table "op"; its choice is printed per shape).

For each shape: first a correctness check on fresh random inputs (the example's .py builds
them and its float32 reference judges them; C is NaN-poisoned, so an unwritten element
fails), then every contender timed in interleaved rounds with CUDA events (medians).
Ratios are baseline time / our time (> 1: ours is faster); geomeans over each table.

    python3 bench/gemm_epilogues.py [--out DIR] [--only NAME ...] [--variant NAME=PATH ...]
                                    [--shapes MxNxK ...] [--repeat N]

(needs torch and an sm_90a GPU). A `--variant` is another schedule of example NAME (same
parameters, the example's .py judges it): it is checked and timed in the same interleaved
rounds as the example and its baselines, and gets its own table. `--shapes` adds shapes to
the bf16 examples' acceptance shapes (mid-size ones, to see a choice hold beyond the four);
`--repeat N` measures everything N times in the one process (is a ratio robust?).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
LLM = [(m, n, 4096) for m in (2048, 8192) for n in (4096, 14336)]
FP8 = [(8192, 8192, 8192), (8192, 14336, 4096), (8192, 4096, 14336)]
FP8_PEAK = 1979.0  # dense e4m3 TFLOP/s, H100/H200 SXM
BF16_PEAK = 989.0
#: Schedules of an example timed beside it on every run (file stems under examples/)
SCHEDULES = {"gemm_bias_gelu": ["gemm_bias_gelu_cooperative", "gemm_bias_gelu_staged"],
             "gemm_fp8": ["gemm_fp8_cooperative", "gemm_fp8_staged"],
             "gemm_residual": ["gemm_residual_cooperative", "gemm_residual_staged"]}
OP = "op"  # the contender name of an example's library op


def library_op(name: str):
    """The `cakec.kernels` op of example `name` as a contender taking the example's inputs
    (A, B, Bias [1, N] f32, C, M, N, K), and a function naming the schedule it takes per
    shape; None for an example without one."""
    if name != "gemm_bias_gelu":
        return None
    import torch

    from cakec.kernels import epilogue

    sms = torch.cuda.get_device_properties(0).multi_processor_count

    def run(a, b, bias, c, m, n, k):
        epilogue.gemm_bias_gelu(a, b, bias[0], out=c)
    return run, lambda m, n: epilogue.schedule_of(m, n, sms, n % 8 == 0)


def geomean(xs: list[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def measure(name: str, shapes: list[tuple[int, int, int]],
            variants: dict[str, str]) -> tuple[list[dict], bool]:
    """Check and time examples/NAME.cake (`cake`) and each variant schedule against the
    .py's baselines at each shape."""
    import torch

    import cakec
    from cakec.api import load_example, time_ms

    path = str(EXAMPLES / f"{name}.cake")
    module = load_example(path)
    kernels = {"cake": cakec.compile(path, target="sm_90a")}
    c_at = [p.name for p in kernels["cake"].meta.params].index("C")
    kernels |= {v: cakec.compile(p, target="sm_90a") for v, p in variants.items()}
    op = library_op(name)
    if op is not None:
        kernels[OP] = op[0]
    rows, ok = [], True
    for m, n, k in shapes:
        shape = {"M": m, "N": n, "K": k}
        inputs = list(module.make_inputs(shape, "cuda"))
        errs, unwritten = {}, {}
        for ours, kernel in list(kernels.items()):
            inputs[c_at].fill_(float("nan"))
            try:
                kernel(*inputs)
            except Exception as e:  # noqa: BLE001 - the op's failure is reported, the rest timed
                if ours != OP:
                    raise
                print(f"\n{name}: the library op failed at {m}x{n}x{k}: {e!r}")
                del kernels[OP]
                ok, op = False, None
                continue
            torch.cuda.synchronize()
            out = inputs[c_at].float()
            ref = module.reference(inputs).float()
            unwritten[ours] = int(torch.isnan(out).sum())
            errs[ours] = float((out - ref).norm() / ref.norm())
            ok &= unwritten[ours] == 0 and errs[ours] < module.tolerance
            del out, ref
        fns = {ours: (lambda f=kernel: f(*inputs)) for ours, kernel in kernels.items()}
        fns |= {b: (lambda f=f: f(inputs)) for b, f in module.baselines.items()}
        ms = time_ms(fns, rounds=7, budget_ms=300)
        flop = module.flops(shape)
        rows.append({"shape": [m, n, k], "rel_err": errs, "unwritten": unwritten, "ms": ms,
                     "tflops": {c: flop / t / 1e9 for c, t in ms.items()}}
                    | ({"op_schedule": op[1](m, n)} if op is not None else {}))
        del inputs
        torch.cuda.empty_cache()
    return rows, ok


def show(name: str, rows: list[dict], peak: float) -> None:
    """Per schedule of ours, one line per shape: ms and TFLOP/s of ours and of each
    baseline, baseline/ours."""
    ours = list(rows[0]["rel_err"])
    baselines = [b for b in rows[0]["ms"] if b not in ours]
    for us in ours:
        title = (name if us == "cake" else f"{name}, library op (schedule chosen per shape)"
                 if us == OP else f"{name}, variant {us}")
        head = f"{'M x N x K':>18} {'cake ms':>8} {'TFLOP/s':>8} {'% peak':>7}"
        for b in baselines:
            head += f" | {b + ' ms':>22} {'TFLOP/s':>8} {'ratio':>6}"
        print(f"\n{title} (ratio = baseline ms / cake ms; peak {peak:.0f} TFLOP/s)")
        print(head + f" | {'rel_err':>8}")
        ratios: dict[str, list[float]] = {b: [] for b in baselines}
        for r in [r for r in rows if us in r["ms"]]:  # the op may have failed at a shape
            line = (f"{'x'.join(map(str, r['shape'])):>18} {r['ms'][us]:8.3f} "
                    f"{r['tflops'][us]:8.1f} {100 * r['tflops'][us] / peak:6.1f}%")
            for b in baselines:
                ratio = r["ms"][b] / r["ms"][us]
                ratios[b].append(ratio)
                line += f" | {r['ms'][b]:22.3f} {r['tflops'][b]:8.1f} {ratio:6.3f}"
            print(line + f" | {r['rel_err'][us]:8.2e}"
                  + (f"  {r['unwritten'][us]} UNWRITTEN" if r["unwritten"][us] else "")
                  + (f"  {r['op_schedule']}" if us == OP else ""))
        print(f"{'geomean':>18} {'':>8} {'':>8} {'':>7}"
              + "".join(f" | {'':>22} {'':>8} {geomean(v):6.3f}" for v in ratios.values()))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for the JSON")
    ap.add_argument("--only", nargs="*", default=None, help="example names to run")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=PATH",
                    help="another .cake schedule of example NAME, timed beside it")
    ap.add_argument("--shapes", nargs="*", default=[], metavar="MxNxK",
                    help="more shapes for gemm_bias_gelu and gemm_residual")
    ap.add_argument("--repeat", type=int, default=1, help="measure everything N times")
    args = ap.parse_args()
    extra = [tuple(int(x) for x in s.split("x")) for s in args.shapes]
    variants: dict[str, dict[str, str]] = {
        name: {stem: str(EXAMPLES / f"{stem}.cake") for stem in stems}
        for name, stems in SCHEDULES.items()}
    for item in args.variant:
        name, _, path = item.partition("=")
        variants.setdefault(name, {})[Path(path).stem] = path

    import torch

    from cakec.api import CakeCompileError

    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"fused-epilogue GEMMs on {torch.cuda.get_device_name()}, CUDA-event medians of "
          "interleaved rounds, correctness first on fresh inputs")
    plan = [("gemm_bias_gelu", LLM + extra, BF16_PEAK), ("gemm_fp8", FP8, FP8_PEAK),
            ("gemm_residual", LLM + extra, BF16_PEAK)]
    results, ok, missing = {}, True, []
    for repeat, (name, shapes, peak) in [(r, p) for r in range(args.repeat) for p in plan]:
        if args.only is not None and name not in args.only:
            continue
        if not (EXAMPLES / f"{name}.cake").is_file():  # said, not skipped silently
            missing.append(name)
            print(f"\n{name}: examples/{name}.cake is not written yet")
            continue
        try:
            rows, good = measure(name, shapes, variants.get(name, {}))
        except CakeCompileError as e:  # reported, not hidden: the table says what is missing
            print(f"\n{name}: does not compile:\n{e}")
            ok = False
            continue
        ok &= good
        results[name if repeat == 0 else f"{name} (repeat {repeat + 1})"] = rows
        if args.repeat > 1:
            print(f"\n[measurement {repeat + 1} of {args.repeat}]", end="")
        show(name, rows, peak)
    print("\ncorrectness:", "ok at every shape measured" if ok else
          "FAILED (see rel_err / UNWRITTEN)", f"(not measured: {', '.join(missing)})" if missing
          else "")
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "gemm_epilogues.json").write_text(json.dumps(
            {"device": torch.cuda.get_device_name(), "results": results, "ok": ok,
             "missing": missing}, indent=1))
    return 0 if ok and not missing else 1


if __name__ == "__main__":
    sys.exit(main())
