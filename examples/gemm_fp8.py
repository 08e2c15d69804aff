"""Inputs, reference and baselines for examples/gemm_fp8.cake (`cakec run` reads these).

C[M, N] = (A[M, K] · B[N, K]ᵀ) · sa[M] (per row) · sb[N] (per column): e4m3 operands, f32
accumulation and scaling, bf16 result: the row-wise scaled FP8 GEMM of FP8 inference, where
sa and sb are the dequantisation scales of each activation row and weight row. Arguments are
in the kernel's parameter order: A, B, Sa, Sb, C, M, N, K (K % 16 == 0: TMA needs 16-byte
rows). Sa is a vector [M]; Sb a [1, N] TMA tensor whose row sits in a buffer padded to 16
bytes.

Baseline: cuBLASLt's FP8 GEMM through `torch._scaled_mm` with the same row-wise scales
(it needs K and N multiples of 16; the acceptance shapes are).
"""

from __future__ import annotations

from cakec.api import example_generator

#: Problem sizes; the first is `cakec run`'s default (`--shape M=..,N=..,K=..` overrides).
#: 8192³ and two LLM projections (MLP up and down), then tails on every side: K not a
#: multiple of the 128-deep stage, M and N not multiples of the 128 × 256 tile, odd N.
shapes = [
    {"M": 8192, "N": 8192, "K": 8192},
    {"M": 8192, "N": 14336, "K": 4096},
    {"M": 8192, "N": 4096, "K": 14336},
    {"M": 1000, "N": 3000, "K": 1040},
    {"M": 129, "N": 257, "K": 144},
    {"M": 77, "N": 333, "K": 80},
    {"M": 1, "N": 4096, "K": 4112},
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["C"]

#: Relative Frobenius error allowed against the f32 reference of the quantised operands:
#: bf16 rounding of C gives ~2e-3.
tolerance = 5e-3

#: The largest finite e4m3 value: each row is scaled so its largest element lands there.
E4M3_MAX = 448.0


def quantize(x):
    """Row-wise e4m3 quantisation: (x / s rounded to e4m3, s) with s = amax(row) / 448."""
    import torch

    s = (x.abs().amax(dim=1) / E4M3_MAX).clamp(min=1e-12)
    return (x / s[:, None]).to(torch.float8_e4m3fn), s.float()


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    """A and B quantised from N(0, 1) values row by row; fresh unless `seed` is given."""
    import torch

    gen = example_generator(device, seed)
    m, n, k = shape["M"], shape["N"], shape["K"]
    a, sa = quantize(torch.randn(m, k, device=device, generator=gen))
    b, sb_values = quantize(torch.randn(n, k, device=device, generator=gen))
    sb = torch.zeros(1, (n + 3) // 4 * 4, device=device)[:, :n]
    sb.copy_(sb_values[None, :])
    c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    return a, b, sa, sb, c, m, n, k


def reference(inputs: tuple):
    """(A·Bᵀ) · sa · sb in float32 (e4m3 products are exact in f32)."""
    a, b, sa, sb = inputs[:4]
    return (a.float() @ b.float().t()) * sa[:, None] * sb


def flops(shape: dict[str, int]) -> float:
    return 2.0 * shape["M"] * shape["N"] * shape["K"]


def scaled_mm(inputs: tuple):
    """cuBLASLt FP8 with row-wise scales: B as the column-major [K, N] operand it takes."""
    import torch

    a, b, sa = inputs[:3]
    return torch._scaled_mm(a, b.t(), scale_a=sa[:, None], scale_b=_contiguous(inputs[3]),
                            out_dtype=torch.bfloat16)


_dense: list = []


def _contiguous(sb):
    """Sb as the contiguous (1, N) scale cuBLASLt takes (copied once per input set, outside
    the timing: the weights' scales are fixed)."""
    if not _dense or _dense[0] is not sb:
        _dense[:] = [sb, sb.contiguous()]
    return _dense[1]


#: Same-process contenders.
baselines = {"torch._scaled_mm": scaled_mm}
