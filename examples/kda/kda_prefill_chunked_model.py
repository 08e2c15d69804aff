"""A float64 model of the chunked KDA prefill exactly as cakec/kernels/kda_prefill_chunked.cake
computes it, with every rounding the kernel makes (bf16 stores into SMEM, f32 accumulators)
emulated, and the token-by-token recurrence it must agree with. NumPy only: the unit test
test/unit/test_kda_chunked_model.py checks the algorithm on the CPU, before any GPU run.

One sequence and head: q, k [T, 128] (scaled by `scale` in the kernel), v [T, 128], g [T, 128]
natural-log decays ≤ 0, beta [T], s0 [128 keys, 128 values]."""

from __future__ import annotations

import numpy as np

LOG2E = 1.4426950408889634
C = 64  #: tokens per chunk


def levels() -> np.ndarray:
    """[64, 64] int32: for i > j the level at which the block inverse joins rows i and j (the
    highest bit where i and j differ: i // 2^lv ≠ j // 2^lv, i // 2^(lv+1) = j // 2^(lv+1));
    −1 on and above the diagonal. The kernel's `Lev` (cakec/kernels/kda.py builds it)."""
    r = np.arange(C)
    diff = np.maximum(r[:, None] ^ r[None, :], 1)
    return np.where(r[:, None] > r[None, :], np.floor(np.log2(diff)), -1).astype(np.int32)


LEVELS = levels()


def bf16(x) -> np.ndarray:
    """Round to bfloat16 (nearest even), as the kernel's packs and SMEM stores do."""
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
    return b.astype(np.uint32).view(np.float32).astype(np.float64)


def f32(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).astype(np.float64)


def recurrent(q, k, v, g, beta, scale: float, s0) -> tuple[np.ndarray, np.ndarray]:
    """(o [T, 128], final state [128, 128]): S ← diag(e^g) S; S += k (β (v − Sᵀk))ᵀ; o = Sᵀ(s·q)."""
    s = np.array(s0, dtype=np.float64)
    o = np.zeros_like(v, dtype=np.float64)
    for t in range(q.shape[0]):
        s = s * np.exp(g[t])[:, None]
        s = s + np.outer(k[t], beta[t] * (v[t] - k[t] @ s))
        o[t] = (scale * q[t]) @ s
    return o, s


def chunked(q, k, v, g, beta, scale: float, s0) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's chunked form. (I + L)⁻¹ by recursive block inversion, as MMAs: with B the
    inverse of L's diagonal blocks of 2^lv rows, B ← B − (mask_lv ∘ B·L)·B joins pairs of them
    (for [[X, 0], [Y, Z]]: −Z⁻¹ Y X⁻¹ below the diagonal); its entries stay those of inverses,
    unlike the doubling product (I − L)(I + L²)…, whose powers grow combinatorially and lose
    everything to rounding when keys are correlated. The state is kept transposed (values × keys) as the kernel
    does. Rows past the end of the last chunk are zero (the kernel's masked loads)."""
    t_len = q.shape[0]
    sp = f32(np.asarray(s0).T)
    o = np.zeros((t_len, v.shape[1]))
    r = np.arange(C)
    tri, after = (r[None, :] <= r[:, None]) * 1.0, (r[None, :] > r[:, None]) * 1.0
    half = np.where(r[None, :] <= r[:, None], 0.5, -0.5)
    for c0 in range(0, t_len, C):
        n = min(C, t_len - c0)

        def rows(x):
            return np.concatenate([x[c0:c0 + n], np.zeros((C - n, *x.shape[1:]))])

        qc, kc, vc, gc, bc = (rows(x) for x in (q, k, v, g, beta))
        gl = f32(gc * LOG2E)
        hi = bf16(gl)
        lo = bf16(gl - hi)
        d = f32(half @ hi + half @ lo)                   # γ − γ_C / 2
        kn, kp = bf16(kc * np.exp2(-d)), bf16(kc * np.exp2(d))
        lacc = f32(kp @ kn.T)
        macc = f32(bf16(scale * qc * np.exp2(d)) @ kn.T)
        lb = bf16(np.where(r[None, :] < r[:, None], f32(lacc * bc[:, None]), 0.0))
        p = np.eye(C)                                    # (I + L)⁻¹ of 1-row blocks
        for lv in range(6):                              # merge blocks of 2^lv rows
            t = np.where(LEVELS == lv, f32(bf16(p) @ lb), 0.0)
            p = f32(p - f32(bf16(t) @ bf16(p)))
        m = bf16(np.where(r[None, :] <= r[:, None], macc, 0.0))
        a = bf16(p * bc[None, :])                        # A·diag(β)
        gam = f32(tri @ hi + tri @ lo)
        q0, k0 = bf16(scale * qc * np.exp2(gam)), bf16(kc * np.exp2(gam))
        kr = bf16(kc * np.exp2(f32(after @ hi + after @ lo)))
        dec = np.exp2(f32(gl.sum(axis=0)))
        w = bf16(-f32(a @ k0))                           # −W
        sb = bf16(sp)                                    # the staged state, [values, keys]
        u = bf16(f32(a @ bf16(vc) + w @ sb.T))
        o[c0:c0 + n] = f32(q0 @ sb.T + m @ u)[:n]
        sp = f32(f32(sp * dec[None, :]) + u.T @ kr)
    return o, sp.T
