"""Inputs, reference and baselines for examples/gemm_bf16_splitk_decode.cake (`cakec run` reads
these): examples/gemm_bf16_splitk.py's contract (A, B, C, W, L, M, N, K, S) with 64×64 tiles and
decode shapes.
"""

from __future__ import annotations

from pathlib import Path

from cakec.api import alias_example

_BASE = Path(__file__).resolve().with_name("gemm_bf16_splitk.cake")
#: outputs, tolerance, reference, flops and baselines are gemm_bf16_splitk.py's
_SPLITK = alias_example(globals(), _BASE)

#: The kernel's tile of C (rows, cols): what L counts.
TILE = (64, 64)

#: Problem sizes; the first is `cakec run`'s default.
shapes = [
    {"M": 16, "N": 4096, "K": 4096},
    {"M": 64, "N": 4096, "K": 14336},
    {"M": 3, "N": 5000, "K": 2056},
]


def make_inputs(shape: dict[str, int], device: str, seed: int | None = None) -> tuple:
    return _SPLITK.inputs_for(TILE, shape, device, seed)
