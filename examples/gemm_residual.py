"""Inputs, reference and baselines for examples/gemm_residual.cake (`cakec run` reads these).

C[M, N] = A[M, K] · B[N, K]ᵀ + α · R[M, N]: bf16 operands and residual, f32 accumulation and
epilogue, bf16 result (an output projection added to the residual stream, with α a runtime
scale). Arguments are in the kernel's parameter order: A, B, R, C, alpha, M, N, K.

The residual is an (M, N) register-tile load, `R.load(coords=(m, n), shape=(128, 256),
dtype=lm.bf16)`, read element by element where the store evaluates acc + α·r.

Baseline: cuBLAS's own fused form, `torch.addmm(R, A, Bᵀ, beta=α)` (β·R + A·Bᵀ in one
GEMM whose epilogue reads R).
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
shapes, outputs, tolerance = _shared.shapes, _shared.outputs, _shared.tolerance

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


#: Same-process contenders.
baselines = {"torch.addmm": addmm}
