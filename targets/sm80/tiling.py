"""How the warps of a role split a register (mma.sync) accumulator: one fact, read by the
sm80 lowering and by the conformance gate (which refuses at verify what has no tiling)."""

from __future__ import annotations

#: Rows × columns of one mma.sync fragment (m16n8); B fragments come two n8 tiles at a time.
FRAG_M, FRAG_N, PAIR_N = 16, 8, 16


def warp_tiling(m: int, n: int, warps: int) -> tuple[int, int] | None:
    """(wm, wn) with wm × wn = warps and every warp's block a whole number of m16 × n16
    (B fragments load two n8 tiles at a time), else of m16 × n8 (an odd last n8 tile):
    wm = 2, 1, 4, 8, 16 where one fits, then any other divisor of the warp count (12 warps
    over a 192-row tile: 12 × 1)."""
    order = (2, 1, 4, 8, 16, *(d for d in range(3, warps + 1) if d not in (4, 8, 16)))
    for n_granule in (PAIR_N, FRAG_N):
        for wm in order:
            if warps % wm == 0 and m % (wm * FRAG_M) == 0 and n % (warps // wm * n_granule) == 0:
                return wm, warps // wm
    return None
