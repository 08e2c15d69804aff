"""Inputs, reference and baselines for examples/chain_sm80.cake (`cakec run` reads these).

O[M, 64] = bf16(A[M, K] · B[64, K]ᵀ) · D[64, 64]ᵀ: bf16 operands, f32 accumulation, the
intermediate rounded to bf16 (as the kernel stages it), f32 result. Arguments in the kernel's
parameter order: A, B, D, O, M, K.
"""

from __future__ import annotations

from cakec.api import example_generator

#: Problem sizes; the first is `cakec run`'s default (`--shape M=..,K=..` overrides).
shapes = [
    {"M": 4096, "K": 512},
    {"M": 256, "K": 256},
    {"M": 1000, "K": 200},  # a row tail and a K tail
    {"M": 1, "K": 8},
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["O"]

#: Relative Frobenius error allowed: the bf16 rounding of the intermediate can land on the
#: other side of a rounding boundary from the reference's (~1e-3).
tolerance = 1e-2


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    """A, B ~ N(0, 1) · K^(-1/4) (A·Bᵀ is O(1)), D ~ N(0, 1) / 8; fresh unless `seed`."""
    import torch

    gen = example_generator(device, seed)
    m, k = shape["M"], shape["K"]
    scale = k ** -0.25
    a = (torch.randn(m, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    b = (torch.randn(64, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    d = (torch.randn(64, 64, device=device, generator=gen) / 8).to(torch.bfloat16)
    o = torch.empty(m, 64, device=device, dtype=torch.float32)
    return a, b, d, o, m, k


def reference(inputs: tuple):
    """bf16(A·Bᵀ)·Dᵀ with both products in float32."""
    a, b, d = inputs[:3]
    e = (a.float() @ b.float().t()).to(a.dtype).float()
    return e @ d.float().t()


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["M"] * 64 * (shape["K"] + 64)


def _torch(inputs: tuple) -> None:
    import torch

    a, b, d = inputs[:3]
    torch.matmul(torch.matmul(a, b.t()), d.t())


#: Same-process contenders: two bf16 cuBLAS calls.
baselines = {"torch.matmul ×2": _torch}
