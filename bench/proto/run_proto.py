"""Build, check and time the hand-written gemm_bf16 prototype against torch.matmul (cuBLAS).

Everything goes through the project's own toolchain: targets/host/nvrtc.py compiles
prelude.cuh + gemm_bf16_handwritten.cu to an sm_90a cubin, cakec.runtime.Kernel launches it
with a hand-written metadata dict (what the emitter will produce for this kernel).

Timings are medians over interleaved rounds of triton's do_bench (itself a median).
Shapes are written M x N x K: A [M, K], B [N, K], C [M, N] = A . B^T, all bf16 row-major.
Checks use fresh random inputs, an fp32 torch reference (relative Frobenius error), a
NaN-poisoned C that lives inside a larger NaN buffer (every element written, nothing
outside it touched), and odd strides for C. Prints a table last; --out writes JSON.

    python3 bench/proto/run_proto.py --variants all --out $OUT

Measured on the lent H200 (NVRTC 13.0, driver 580), TFLOP/s, medians of 3 interleaved rounds:

    shape (M x N x K)   torch  torch_nn  default  no_cluster  sync_store  group8
    4096x4096x4096      705.0     702.1    650.9       652.5       630.0   635.9
    8192x8192x8192      662.5     662.7    650.8       650.4       657.3   652.2
    8192x8192x28672     668.6     668.5    664.2       667.7       661.7   660.7
    4096x14336x4096     673.7     673.3    627.9       616.2       631.5   620.1

The previous call measured the default at 663 / 689 / 684 / 657 against torch 711 / 671 / 684 /
673. One configuration moves by up to 5% between calls (clocks, power), so variants within ~3%
of each other are not told apart. What mattered: the cluster's remote mbarrier arrive with
.release.cluster semantics cost ~30% (470 TFLOP/s), the default .release.cta fixed it; BK = 32
with 64B swizzle and 8 stages lost 2-20%; the deferred epilogue beat synchronous stores by 2-8%
on the shapes with short K. cuBLAS reached ~800 TFLOP/s on this machine kind in other sessions
(8192^3, without do_bench's L2 flush); here it measures 660-705.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import torch
import triton

from cakec.runtime import Kernel
from cakec.targets.emit.emitter import prelude_source
from cakec.targets.sm90.wgmma_forms import WgmmaForm
from cakec.targets.host import nvrtc

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "gemm_bf16_handwritten.cu"

def _variant(stages: int = 4, group_m: int = 16, cluster: int = 2, defer: int = 1) -> dict:
    return {"CAKE_STAGES": stages, "CAKE_GROUP_M": group_m, "CAKE_CLUSTER": cluster,
            "CAKE_DEFER_STORE": defer}


# name -> -D overrides of the kernel's tuning knobs. The first entry is the kernel's default
# configuration; each other one undoes one choice, to show what that choice is worth.
VARIANTS: dict[str, dict[str, int]] = {
    "default": _variant(),
    "no_cluster": _variant(cluster=1),
    "sync_store": _variant(defer=0),
    "group8": _variant(group_m=8),
}
CHECK_SHAPES = [(1, 4096, 4096), (128, 256, 16), (1000, 1000, 1000), (77, 333, 72),
                (300, 17, 8), (1024, 1024, 8200), (1000, 3000, 1000), (4096, 4096, 4096),
                (8192, 8192, 8192)]
QUICK_CHECK_SHAPES = [(1, 4096, 4096), (77, 333, 72), (1000, 3000, 1000), (4096, 4096, 4096)]
TIME_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (8192, 8192, 28672), (4096, 14336, 4096)]
TOLERANCE = 5e-3  # bf16 output rounding alone gives ~1e-3
ROUNDS = 3


def metadata(stages: int, cluster: int) -> dict:
    """What the emitter writes for gemm_bf16 (docs/abi.md). With a cluster of 2 each CTA
    loads (and multicasts) half of the B tile, and the grid is whole resident clusters."""
    grid = ("min(cdiv(M, 128) * cdiv(N, 256), sm_count)" if cluster == 1 else
            f"{cluster} * min(cdiv(cdiv(M, 128), {cluster}) * cdiv(N, 256), max_clusters)")
    return {
        "kernel": "gemm_bf16", "entry": "gemm_bf16", "target": "sm_90a",
        "block": [384, 1, 1], "grid": [grid, "1", "1"], "cluster": [cluster, 1, 1],
        "dynamic_smem": 1024 + stages * (16384 + 32768) + 16 * stages,
        "params": [
            {"name": "A", "kind": "tensor", "rank": 2, "dtype": "bf16",
             "tmaps": [{"box": [128, 64], "swizzle": "128b", "oob_fill": "zero"}]},
            {"name": "B", "kind": "tensor", "rank": 2, "dtype": "bf16",
             "tmaps": [{"box": [256 // cluster, 64], "swizzle": "128b", "oob_fill": "zero"}]},
            {"name": "C", "kind": "tensor", "rank": 2, "dtype": "bf16", "tmaps": [],
             "shape": ["M", "N"]},
            {"name": "M", "kind": "scalar", "dtype": "i32"},
            {"name": "N", "kind": "scalar", "dtype": "i32"},
            {"name": "K", "kind": "scalar", "dtype": "i32"}],
        "shape_bindings": {"M": ["A", 0], "K": ["A", 1], "N": ["B", 0]},
        "constraints": ["K % 8 == 0"],
    }


def proto_source() -> str:
    """The prelude, the one wgmma form the prototype issues (generated as the emitter
    generates it), then the hand-written kernel."""
    return prelude_source() + WgmmaForm(256, 16, "f32", "bf16", "bf16").source() + SOURCE.read_text()


def build(defines: dict[str, int]) -> tuple[Kernel, bytes, str]:
    source = proto_source()
    opts = [f"-D{k}={v}" for k, v in defines.items()]
    cubin = nvrtc.compile_cuda(source, target="sm_90a", output="cubin",
                               name="gemm_bf16_handwritten.cu", extra_options=opts)
    report = nvrtc.ptxas_report(source, target="sm_90a", extra_options=opts)
    meta = metadata(defines["CAKE_STAGES"], defines["CAKE_CLUSTER"])
    return Kernel(cubin, meta), cubin, report


def sass_counts(cubin: bytes) -> dict[str, int]:
    tool = shutil.which("cuobjdump") or shutil.which("cuobjdump", path="/usr/local/cuda/bin")
    if tool is None:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        sass = subprocess.run([tool, "--dump-sass", f.name], capture_output=True, text=True).stdout
    return {op: len(re.findall(rf"\b{op}\b", sass))
            for op in ("HGMMA", "UTMALDG", "SYNCS", "STG", "LDL", "STL", "BAR")}


def check(kernel: Kernel, M: int, N: int, K: int, gen: torch.Generator) -> dict:
    A = torch.randn(M, K, device="cuda", generator=gen).to(torch.bfloat16)
    B = torch.randn(N, K, device="cuda", generator=gen).to(torch.bfloat16)
    # C is a strided window of a NaN-filled buffer: guards on every side catch stray writes.
    # Row stride N + 4 and a 4-byte offset keep even N on the paired-store path; odd N
    # (odd stride) exercises the scalar one.
    buf = torch.full((M + 2, N + 4), float("nan"), device="cuda", dtype=torch.bfloat16)
    C = buf[1:M + 1, 2:N + 2]
    kernel(A, B, C, M, N, K)
    torch.cuda.synchronize()
    ref = A.float() @ B.float().t()
    unwritten = int(torch.isnan(C).sum())
    guard = buf.clone()
    guard[1:M + 1, 2:N + 2] = float("nan")
    touched = int((~torch.isnan(guard)).sum())
    err = float((C.float() - ref).norm() / ref.norm()) if unwritten == 0 else float("nan")
    cublas = torch.matmul(A, B.t()).float()
    err_cublas = float((cublas - ref).norm() / ref.norm())
    ok = unwritten == 0 and touched == 0 and err < TOLERANCE
    return {"shape": [M, N, K], "rel_err": err, "cublas_rel_err": err_cublas,
            "unwritten": unwritten, "outside_writes": touched, "ok": ok}


def bench_ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variants", default="all", help="comma list of variant names, or all")
    ap.add_argument("--out", default=os.environ.get("OUT"), help="folder for the JSON results")
    ap.add_argument("--tag", default="results", help="JSON file name (without .json)")
    args = ap.parse_args()
    names = list(VARIANTS) if args.variants == "all" else args.variants.split(",")
    torch.backends.cuda.matmul.allow_tf32 = False
    gen = torch.Generator(device="cuda")
    gen.manual_seed(0)
    results: dict = {"device": torch.cuda.get_device_name(), "nvrtc": nvrtc.nvrtc_version(),
                     "variants": {}}
    kernels: dict[str, Kernel] = {}
    all_ok = True
    for i, name in enumerate(names):
        kernel, cubin, report = build(VARIANTS[name])
        spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
        info = {"defines": VARIANTS[name], "ptxas": report.strip().splitlines()[-3:],
                "spills": spills, "sass": sass_counts(cubin), "checks": []}
        results["variants"][name] = info
        try:
            info["attributes"] = kernel.function_attributes()
            print(f"[{name}] ptxas spills {spills} sass {info['sass']} "
                  f"attrs {info['attributes']} facts {kernel.device_facts()}", flush=True)
            for shape in CHECK_SHAPES if i == 0 else QUICK_CHECK_SHAPES:
                c = check(kernel, *shape, gen)
                info["checks"].append(c)
                all_ok &= c["ok"]
                print(f"[{name}] check {shape}: rel_err {c['rel_err']:.2e} (cublas "
                      f"{c['cublas_rel_err']:.2e}) unwritten {c['unwritten']} outside "
                      f"{c['outside_writes']} {'OK' if c['ok'] else 'FAIL'}", flush=True)
        except RuntimeError as e:  # a launch refused by the driver: report it, keep going
            info["error"] = str(e)
            all_ok = False
            print(f"[{name}] FAILED: {e}", flush=True)
            continue
        if all(c["ok"] for c in info["checks"]):
            kernels[name] = kernel

    rows = []
    for M, N, K in TIME_SHAPES:
        A = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        B = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        C = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        flop = 2.0 * M * N * K
        Bt = B.t().contiguous()  # [K, N]: the NN layout, cuBLAS's other code path
        fns = {"torch": lambda: torch.matmul(A, B.t()), "torch_nn": lambda: torch.matmul(A, Bt)}
        for name, kernel in kernels.items():
            fns[name] = lambda kernel=kernel: kernel(A, B, C, M, N, K)
        # Interleaved rounds: clocks and power drift by several % over a run, so each
        # contender is timed in every round and the row reports per-contender medians.
        samples: dict[str, list[float]] = {name: [] for name in fns}
        for _ in range(ROUNDS):
            for name, fn in fns.items():
                samples[name].append(flop / bench_ms(fn) / 1e9)
        med = {name: statistics.median(v) for name, v in samples.items()}
        rows.append({"shape": [M, N, K], "torch_tflops": med.pop("torch"),
                     "torch_nn_tflops": med.pop("torch_nn"), "cake": med, "samples": samples})
        del A, B, Bt, C, fns
        print(f"timed {M}x{N}x{K}: " + ", ".join(
            f"{n} {min(v):.0f}-{max(v):.0f}" for n, v in samples.items()), flush=True)
    results["timings"] = rows

    if args.out:
        Path(args.out, f"{args.tag}.json").write_text(json.dumps(results, indent=1))
    print(f"\nTFLOP/s, M x N x K (C[M,N] = A[M,K] . B[N,K]^T), median of {ROUNDS} interleaved do_bench medians")
    print("torch = torch.matmul(A, B.t()) (the same problem); torch_nn = A @ B.t().contiguous()")
    print(f"{'shape':>17} {'torch':>7} {'torch_nn':>8} " + " ".join(f"{n:>14}" for n in kernels)
          + "  best/torch")
    for row in rows:
        best = max(row["cake"].values())
        print(f"{'x'.join(map(str, row['shape'])):>17} {row['torch_tflops']:7.1f} "
              f"{row['torch_nn_tflops']:8.1f} "
              + " ".join(f"{v:14.1f}" for v in row["cake"].values())
              + f"  {best / row['torch_tflops']:.3f}")
    print(f"correctness: {'ALL OK' if all_ok else 'FAILURES (see above)'}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
