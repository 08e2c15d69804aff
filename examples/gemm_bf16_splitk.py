"""Inputs, reference and baselines for examples/gemm_bf16_splitk.cake (`cakec run` reads these);
examples/gemm_bf16_splitk_decode.py and gemm_bf16_splitk_swap.py give their kernels the same
contract with their own tile and shapes.

C[M, N] = A[M, K] · B[N, K]ᵀ, K split into S parts reduced by `T.split_store`. Arguments in the
kernel's parameter order: A, B, C, W, L, M, N, K, S: W [S, M, N] the f32 partial sums, L one i32
counter per tile of C, zero (the kernel leaves it zero, so every launch of a run reuses it),
S what cakec.kernels.gemm would choose for this shape on this GPU (routes.split_parts).
"""

from __future__ import annotations

from pathlib import Path

from cakec.api import load_example

#: The kernel's tile of C (rows, cols): what L counts.
TILE = (128, 128)

#: Problem sizes; the first is `cakec run`'s default (`--shape M=..,N=..,K=..` overrides):
#: few tiles and a long K (the shapes split-K is for), and tails on every side.
shapes = [
    {"M": 256, "N": 4096, "K": 14336},
    {"M": 128, "N": 4096, "K": 4096},
    {"M": 1000, "N": 300, "K": 1000},
]

#: Parameters the kernel writes (poisoned with NaN before the launch).
outputs = ["C"]

#: Relative Frobenius error allowed against the f32 reference: bf16 rounding of C alone
#: gives ~2e-3.
tolerance = 5e-3


def inputs_for(tile: tuple[int, int], shape: dict[str, int], device: str,
               seed: int | None = None) -> tuple:
    """A split-K kernel's arguments for a kernel of tile `tile`."""
    import torch

    from cakec.api import example_generator
    from cakec.runtime.routes import split_parts

    gen = example_generator(device, seed)
    m, n, k = shape["M"], shape["N"], shape["K"]
    a = torch.randn(m, k, device=device, generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device=device, generator=gen).to(torch.bfloat16)
    c = torch.empty(m, n, device=device, dtype=torch.bfloat16)
    tiles = -(-m // tile[0]) * -(-n // tile[1])
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    s = split_parts(tiles, -(-k // 64), sms, tile)
    w = torch.empty(s, m, n, device=device, dtype=torch.float32)
    counters = torch.zeros(tiles, device=device, dtype=torch.int32)
    return a, b, c, w, counters, m, n, k, s


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    return inputs_for(TILE, shape, device, seed)


#: The product is gemm_bf16's: its f32 reference, FLOP count and cuBLAS baseline (W, L and S
#: follow A, B, C in the arguments, which those read by position).
_GEMM = load_example(Path(__file__).with_name("gemm_bf16.cake"))
reference, flops, baselines = _GEMM.reference, _GEMM.flops, _GEMM.baselines
