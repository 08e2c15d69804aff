"""Inputs, reference and baselines for examples/gemm_sm80.cake (`cakec run` reads these).

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
# `cakec run` builds a cubin for the .cake's target (sm_80): run it on an A100 (or pass
# --target sm_89 / sm_120a on those GPUs); on newer GPUs use `ptx_kernel()` below.

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


def ptx_kernel(source: str | None = None):
    """The kernel emitted as sm_80 PTX and JIT-compiled by the driver for the current GPU (any
    GPU from sm_80 on runs sm_80 PTX; the runtime's target check is for SASS, so the metadata
    names the device's own architecture)."""
    from pathlib import Path

    import torch

    from cakec import api
    from cakec.runtime import Kernel

    path = source or str(Path(__file__).with_suffix(".cake"))
    result = api.emit(api.load(path), "sm_80")
    if result.unit is None:
        raise RuntimeError(f"{path} did not emit for sm_80")
    major, minor = torch.cuda.get_device_capability()
    metadata = dict(result.unit.metadata, target=f"sm_{major}{minor}")
    return Kernel(api.binary(result.unit, "ptx") + b"\0", metadata)
