"""Inputs, reference and baselines for examples/gemm_bf16_splitk_swap.cake (`cakec run` reads
these): examples/gemm_bf16_splitk.py's contract (A, B, C, W, L, M, N, K, S) with C tiles of
16×64 (a (64, 16) tile of Cᵀ) and decode shapes.
"""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

_BASE = Path(__file__).resolve().with_name("gemm_bf16_splitk.cake")
#: outputs, tolerance, reference, flops and baselines are gemm_bf16_splitk.py's
_SPLITK = alias_example(globals(), _BASE)

#: The kernel's tile of C (rows, cols): what L counts.
TILE = (16, 64)

#: Problem sizes; the first is `cakec run`'s default.
shapes = [
    {"M": 1, "N": 4096, "K": 14336},
    {"M": 16, "N": 8192, "K": 8192},
    {"M": 3, "N": 4000, "K": 4104},
]


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    return _SPLITK.inputs_for(TILE, shape, device, seed)
