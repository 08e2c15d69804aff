"""One launch of each GEMM example and of its library baseline, after warm-up, between
cudaProfilerStart/Stop, for Nsight Compute to compare where each spends its cycles:

    ncu --clock-control none --profile-from-start off --section SpeedOfLight \
        --section WarpStateStats python3 bench/ncu_gemm.py [gemm_bf16 gemm_fp8 ...]

(needs torch and an sm_90a GPU; no timing is printed: bench/gemm.py and
bench/gemm_epilogues.py time the same kernels side by side). Shapes: 8192³ for gemm_bf16,
8192 × 14336 × 4096 (an LLM projection, K short enough that the epilogue shows) for the others.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHAPES = {"gemm_bf16": (8192, 8192, 8192), "gemm_bias_gelu": (8192, 14336, 4096),
          "gemm_fp8": (8192, 14336, 4096)}


def contenders(name: str) -> dict:
    """{label: callable} for example NAME: ours and each baseline of its .py, on one input set."""
    import torch

    import cakec
    from cakec.api import load_example

    m, n, k = SHAPES[name]
    path = str(ROOT / "examples" / f"{name}.cake")
    kernel = cakec.compile(path, target="sm_90a")
    if name == "gemm_bf16":
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        return {f"{name} cake": lambda: kernel(a, b, c, m, n, k),
                f"{name} torch.matmul": lambda: torch.matmul(a, b.t())}
    module = load_example(path)
    inputs = module.make_inputs({"M": m, "N": n, "K": k}, "cuda")
    fns = {f"{name} cake": lambda: kernel(*inputs)}
    fns |= {f"{name} {b}": (lambda f=f: f(inputs)) for b, f in module.baselines.items()
            if not b.startswith("cake")}
    return fns


def main(argv: list[str]) -> int:
    import torch

    fns = {label: fn for name in (argv or list(SHAPES)) for label, fn in contenders(name).items()}
    for fn in fns.values():
        for _ in range(3):
            fn()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStart()
    for label, fn in fns.items():
        torch.cuda.nvtx.range_push(label)
        fn()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.cudart().cudaProfilerStop()
    print("profiled, in order:", ", ".join(fns))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
