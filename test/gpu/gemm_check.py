"""What every GEMM GPU test checks, for any kernel with the (A, B, C, M, N, K) contract:
the shape set (tails on every side, M = 1, K = 16, fewer tiles than SMs, many laps of the
persistent loop and of the stage ring) and one check per shape."""

from __future__ import annotations

TOLERANCE = 5e-3  # bf16 rounding of C alone gives ~2e-3

# M x N x K (K % 8 == 0: TMA and cp.async need 16-byte rows).
SHAPES = [
    (1, 256, 64),         # one row, one tile
    (1, 4096, 4096),      # one row, 16 tiles along N
    (128, 256, 16),       # K = 16: one k16 step, one partial stage
    (77, 333, 72),        # every dimension a tail, odd N (unpaired stores)
    (300, 17, 8),         # N and K below one instruction
    (129, 257, 136),      # one past the tile on M and N
    (1000, 1000, 1000),   # k_tiles = 16: not a multiple of the stages
    (1000, 3000, 1000),
    (2048, 512, 16),
    (1024, 1024, 8200),   # long K: many laps of the ring, K tail
    (4096, 4096, 4096),   # 512 tiles: several laps of the persistent loop per CTA
    (8192, 8192, 8192),
]


def check_gemm(kernel, m: int, n: int, k: int) -> None:
    """C = A · Bᵀ on fresh random inputs against an f32 reference. C is a strided window of a
    NaN-filled buffer: its guard rows and columns catch writes outside C, and NaN left inside
    C is an element never written."""
    import torch

    gen = torch.Generator(device="cuda").manual_seed(m * 7919 + n * 31 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda", generator=gen).to(torch.bfloat16)
    buf = torch.full((m + 2, n + 4), float("nan"), device="cuda", dtype=torch.bfloat16)
    c = buf[1:m + 1, 2:n + 2]
    kernel(a, b, c, m, n, k)
    torch.cuda.synchronize()
    assert int(torch.isnan(c).sum()) == 0, "some elements of C were never written"
    guard = buf.clone()
    guard[1:m + 1, 2:n + 2] = float("nan")
    assert int((~torch.isnan(guard)).sum()) == 0, "the kernel wrote outside C"
    ref = a.float() @ b.float().t()
    err = float((c.float() - ref).norm() / ref.norm())
    assert err < TOLERANCE, f"relative error {err:.2e}"
