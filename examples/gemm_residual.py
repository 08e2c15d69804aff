"""Inputs, reference and baselines for examples/gemm_residual.cake (`cakec run` reads these).

C[M, N] = A[M, K] · B[N, K]ᵀ + α · R[M, N]: bf16 operands and residual, f32 accumulation and
epilogue, bf16 result (an output projection added to the residual stream, with α a runtime
scale). Arguments are in the kernel's parameter order: A, B, R, C, alpha, M, N, K.

R is a TMA tensor: its rows must be 16-byte aligned (N % 8 == 0), so the shapes are the
shared epilogue shapes with such N, plus tails on every side with aligned N;
examples/gemm_residual_cooperative.py (any N) keeps the odd-N ones.

Baselines: cuBLAS's own fused form, `torch.addmm(R, A, Bᵀ, beta=α)` (β·R + A·Bᵀ in one
GEMM whose epilogue reads R), and our plain GEMM (examples/gemm_bf16.cake) at the same shape,
so the epilogue's cost is measured against both.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from cakec.api import example_generator

# The epilogue GEMMs share one shape set (LLM shapes, then tails on every side) and the bf16
# result's tolerance: taken from gemm_bias_gelu.py.
_spec = importlib.util.spec_from_file_location("cake_example_gemm_bias_gelu_contract",
                                               Path(__file__).with_name("gemm_bias_gelu.py"))
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)  # type: ignore[union-attr]
outputs, tolerance = _shared.outputs, _shared.tolerance
#: Every shape the other epilogue GEMMs take (`ALL_SHAPES`, the cooperative schedule's)
#: and those of them a TMA tensor R can address, with aligned-N tails on every side.
ALL_SHAPES = _shared.shapes
shapes = [s for s in ALL_SHAPES if s["N"] % 8 == 0] + [
    {"M": 129, "N": 264, "K": 136},
    {"M": 77, "N": 328, "K": 72},
    {"M": 300, "N": 8, "K": 8},
]

#: The residual's scale (a runtime argument; any value but 0 and 1 shows it is applied).
ALPHA = 0.75


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    """A, B ~ N(0, 1) · K^(-1/4) (A·Bᵀ is O(1)) and R ~ N(0, 1), the same scale as the
    product, so neither term hides the other's errors; fresh unless `seed` is given."""
    import torch

    gen = example_generator(device, seed)
    m, n, k = shape["M"], shape["N"], shape["K"]
    scale = k ** -0.25
    a = (torch.randn(m, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    b = (torch.randn(n, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    r = torch.randn(m, n, device=device, generator=gen).to(torch.bfloat16)
    c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    return a, b, r, c, ALPHA, m, n, k


def reference(inputs: tuple):
    """A·Bᵀ + α·R in float32."""
    a, b, r, _, alpha = inputs[:5]
    return a.float() @ b.float().t() + alpha * r.float()


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def addmm(inputs: tuple):
    """cuBLAS with R as the β-scaled C input of its epilogue."""
    import torch

    a, b, r, _, alpha = inputs[:5]
    return torch.addmm(r, a, b.t(), beta=alpha)


_plain: list = []


def plain_gemm(inputs: tuple) -> None:
    """examples/gemm_bf16.cake on the same A, B (writing C without the epilogue)."""
    if not _plain:
        import cakec

        _plain.append(cakec.compile(str(Path(__file__).with_name("gemm_bf16.cake")),
                                    target="sm_90a"))
    a, b, _, c, _, m, n, k = inputs
    _plain[0](a, b, c, m, n, k)


#: Same-process contenders.
baselines = {"torch.addmm": addmm, "cake gemm_bf16": plain_gemm}
