"""Inputs, reference and baselines for examples/gemm_bias_gelu.cake (`cakec run` reads these).

C[M, N] = gelu_tanh(A[M, K] · B[N, K]ᵀ + bias[N]): bf16 operands, f32 accumulation and
epilogue, bf16 result (a linear layer with its activation, as in an LLM's MLP). Arguments
are in the kernel's parameter order: A, B, Bias, C, M, N, K. Bias is a [1, N] f32 TMA tensor
(the epilogue's type; its row sits in a buffer padded to 16 bytes, as TMA needs); the
baselines get the same values as the bf16 vector `F.linear` takes.

Baselines: the unfused torch pair (`F.linear` then `F.gelu(approximate="tanh")`, what a
model runs without a fused kernel) and our own plain GEMM (examples/gemm_bf16.cake) at the
same shape, so the epilogue's cost is measured against both.
"""

from __future__ import annotations

from pathlib import Path

from cakec.api import example_generator

HERE = Path(__file__).resolve().parent

#: Problem sizes; the first is `cakec run`'s default (`--shape M=..,N=..,K=..` overrides).
#: The LLM shapes of the acceptance bench, then tails on every side: K not a multiple of the
#: 64-deep stage, M and N not multiples of the 128 × 256 tile, odd N (unpaired columns).
shapes = [
    {"M": 8192, "N": 14336, "K": 4096},
    {"M": 2048, "N": 4096, "K": 4096},
    {"M": 8192, "N": 4096, "K": 4096},
    {"M": 2048, "N": 14336, "K": 4096},
    {"M": 1000, "N": 3000, "K": 1000},
    {"M": 129, "N": 257, "K": 136},
    {"M": 77, "N": 333, "K": 72},
    {"M": 1, "N": 4096, "K": 4104},
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["C"]

#: Relative Frobenius error allowed against the f32 reference: bf16 rounding of C gives
#: ~2e-3, tanh.approx.f32 (2⁻¹¹ relative) adds less.
tolerance = 5e-3


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    """A, B ~ N(0, 1) / sqrt(K) per element (so A·Bᵀ is O(1), where gelu is curved rather
    than linear or zero) and a bias of the same scale; fresh values unless `seed` is given."""
    import torch

    gen = example_generator(device, seed)
    m, n, k = shape["M"], shape["N"], shape["K"]
    scale = k ** -0.25  # each operand carries K^(-1/4): the products sum to O(1)
    a = (torch.randn(m, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    b = (torch.randn(n, k, device=device, generator=gen) * scale).to(torch.bfloat16)
    bias = torch.zeros(1, (n + 3) // 4 * 4, device=device)[:, :n]
    bias.copy_(torch.randn(1, n, device=device, generator=gen).to(torch.bfloat16))
    c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    return a, b, bias, c, m, n, k


def reference(inputs: tuple):
    """gelu_tanh(A·Bᵀ + bias) in float32."""
    import torch

    a, b, bias = inputs[0], inputs[1], inputs[2]
    return torch.nn.functional.gelu(a.float() @ b.float().t() + bias, approximate="tanh")


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def unfused(inputs: tuple):
    """What a model runs without a fused kernel: cuBLAS's GEMM with the bias, then gelu."""
    import torch.nn.functional as F

    a, b, bias16 = inputs[0], inputs[1], _bias_bf16(inputs)
    return F.gelu(F.linear(a, b, bias16), approximate="tanh")


_bias16: list = []


def _bias_bf16(inputs: tuple):
    """The bias as the bf16 vector F.linear takes (converted once per input set, outside
    the timing: a layer's bias is a weight)."""
    bias = inputs[2]
    if not _bias16 or _bias16[0] is not bias:
        _bias16[:] = [bias, bias[0].to(inputs[0].dtype)]
    return _bias16[1]


_plain: list = []


def plain_gemm(inputs: tuple) -> None:
    """examples/gemm_bf16.cake on the same A, B (writing C without the epilogue)."""
    if not _plain:
        import cakec

        _plain.append(cakec.compile(str(HERE / "gemm_bf16.cake"), target="sm_90a"))
    a, b, _, c, m, n, k = inputs
    _plain[0](a, b, c, m, n, k)


#: Same-process contenders.
baselines = {"torch linear+gelu": unfused, "cake gemm_bf16": plain_gemm}
