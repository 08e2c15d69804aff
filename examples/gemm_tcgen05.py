"""Inputs, reference and baselines for examples/gemm_tcgen05.cake (`cakec run` reads these).

C[M, N] = A[M, K] · B[N, K]ᵀ: bf16 operands, f32 accumulation, bf16 result. Arguments are
in the kernel's parameter order: A, B, C, M, N, K.
"""

from __future__ import annotations

#: Problem sizes; the first is `cakec run`'s default (`--shape M=..,N=..,K=..` overrides).
shapes = [
    {"M": 8192, "N": 8192, "K": 8192},
    {"M": 4096, "N": 4096, "K": 4096},
    {"M": 8192, "N": 8192, "K": 28672},
    {"M": 4096, "N": 14336, "K": 4096},
    {"M": 1000, "N": 3000, "K": 1000},  # tails on every side
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["C"]

#: Relative Frobenius error allowed against the f32 reference: bf16 rounding of C alone
#: gives ~2e-3.
tolerance = 5e-3


def make_inputs(shape: dict[str, int], device: str) -> tuple:
    import torch

    m, n, k = shape["M"], shape["N"], shape["K"]
    a = torch.randn(m, k, device=device).to(torch.bfloat16)
    b = torch.randn(n, k, device=device).to(torch.bfloat16)
    c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    return a, b, c, m, n, k


def reference(inputs: tuple):
    a, b = inputs[0], inputs[1]
    return a.float() @ b.float().t()


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def _cublas(inputs: tuple) -> None:
    import torch

    torch.matmul(inputs[0], inputs[1].t())


#: Same-process contenders: cuBLAS through torch.matmul.
baselines = {"torch.matmul": _cublas}
