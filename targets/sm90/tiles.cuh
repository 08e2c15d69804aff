// Cake register-tile helpers (sm_90a): vectors in the wgmma accumulator layout, their loads
// and stores, Σx² of SMEM rows and the quad merge of a running argmin. Appended after
// targets/emit/tiles.cuh (the target-neutral helpers) by the emitter; no #include.
//
// Layout (targets/sm90/tiles.py): a role of G warpgroups splits an M-row tile into G
// blocks of M/G rows, each F = M/G/64 wgmma fragments of 64 rows. In fragment f, lane l of
// warp w (within its warpgroup) holds rows 64 f + 16 w + l/4 + 8 h (h = 0, 1) and columns
// 8 j + 2 (l % 4) + e (e = 0, 1). An (M, 1) vector is `E v[F][2]` (v[f][h], the same in the
// 4 lanes of a quad); a (1, N) vector is `E v[N / 4]` (v[2 j + e], the same in every warp).
#ifndef CAKE_SM90_TILES_CUH
#define CAKE_SM90_TILES_CUH

// (1, N) vector: elements c[R-1] + column of t's last dimension; outside the tensor, `other`.
// A run wholly inside a contiguous, 8-byte aligned row is read with one 8-byte load per
// column pair (the common case: every centroid tile but the last); anything else element
// by element with bounds checks.
template <int N, int R, class E>
__device__ __forceinline__ void cake_load_cols(E (&out)[N / 4], const CakeTensor<R>& t,
                                               const i32 (&c)[R], E other) {
  static_assert(sizeof(E) == 4, "vectors of 4-byte elements");
  const long long off = cake_run_offset<R>(t, c);
  const long long n = t.shape[R - 1], ld = t.stride[R - 1];
  const i32 col0 = c[R - 1] + 2 * (i32)(cake_lane_id() % 4u);
  const E* const p = (const E*)t.ptr + off;
  if (off >= 0 && ld == 1 && c[R - 1] >= 0 && c[R - 1] + N <= n && ((u64)(p + col0) & 7) == 0) {
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
      const uint2 v = *(const uint2*)(p + col0 + 8 * j);
      cake_from_bits(out[2 * j], v.x);
      cake_from_bits(out[2 * j + 1], v.y);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const i32 col = col0 + 8 * j + e;
      out[2 * j + e] = (off >= 0 && col >= 0 && col < n) ? p[col * ld] : other;
    }
  }
}

// (M, 1) vector of one warpgroup (rows row0 + ... of its block) stored to c[R-1] + row of t's
// last dimension; lane q = 0, 1 of each quad writes h = q. Rows outside the tensor are skipped.
template <int F, int R, class E>
__device__ __forceinline__ void cake_store_rows(const E (&v)[F][2], const CakeTensor<R>& t,
                                                const i32 (&c)[R], i32 row0) {
  // No early return: a warp must leave this helper converged (a wgmma may follow).
  const u32 lane = cake_lane_id(), q = lane % 4u;
  const long long off = cake_run_offset<R>(t, c);
  const long long n = t.shape[R - 1], ld = t.stride[R - 1];
  E* const p = (E*)t.ptr + off;
  const i32 row = c[R - 1] + row0 + 16 * (i32)(cake_warp_id() % 4u) + (i32)(lane / 4u) + 8 * (i32)q;
#pragma unroll
  for (int f = 0; f < F; ++f) {
    const E x = q ? v[f][1] : v[f][0];
    const i32 r = row + 64 * f;
    if (q < 2u && off >= 0 && r >= 0 && r < n) p[r * ld] = x;
  }
}

// An (L, 1) vector from the run of T's last dimension at element coordinates c into this
// thread's rows (v[f][h]: row c[R-1] + row0 + 64 f + 16 (warp % 4) + lane / 4 + 8 h, the
// accumulator's rows); elements outside T read `other`. Each quad's lanes read the same two
// words (one transaction).
template <int F, int R, class E>
__device__ __forceinline__ void cake_load_rows(E (&v)[F][2], const CakeTensor<R>& t,
                                               const i32 (&c)[R], i32 row0, E other) {
  const long long off = cake_run_offset<R>(t, c);
  const long long n = t.shape[R - 1], ld = t.stride[R - 1];
  const E* const p = (const E*)t.ptr + off;
  const i32 row = c[R - 1] + row0 + 16 * (i32)(cake_warp_id() % 4u) + (i32)(cake_lane_id() / 4u);
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const i32 r = row + 64 * f + 8 * h;
      v[f][h] = (off >= 0 && r >= 0 && r < n) ? p[r * ld] : other;
    }
  }
}

// Σ x² over each of this thread's rows of a bf16 SMEM stage stored as `atoms` column blocks of
// rows × pitch bytes (derive-smem's layout). Lane q of a quad sums logical chunks q, q+4, ...
// of each block, then the quad adds its four partial sums (in the same order on every row).
template <int F, u32 ATOMS, u32 ATOM_BYTES, u32 PITCH, u32 SWZ>
__device__ __forceinline__ void cake_sum_sq_bf16(float (&out)[F][2], u32 stage, i32 row0) {
  const u32 row = (u32)row0 + 16u * (cake_warp_id() % 4u) + cake_lane_id() / 4u;
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
      out[f][h] = cake_sum_sq_quad_bf16<ATOMS, ATOM_BYTES, PITCH, SWZ>(stage, row + 64u * f + 8u * h);
  }
}

// A (1, N) f32/i32 vector from SMEM into this thread's columns 8 j + 2 (l % 4) + e.
template <int N, class E>
__device__ __forceinline__ void cake_load_cols_smem(E (&out)[N / 4], u32 addr) {
  static_assert(sizeof(E) == 4, "vectors of 4-byte elements");
  const u32 base = addr + 8u * (cake_lane_id() % 4u);
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    u32 x, y;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(x), "=r"(y) : "r"(base + 32u * j));
    cake_from_bits(out[2 * j], x);
    cake_from_bits(out[2 * j + 1], y);
  }
}

// Fold one tile's argmin chains into the running pair. Chain e of row (f, h) holds its minimum
// m and the octet j8 = 8 j of its lowest column among equal minima (column col + j8 + e, col =
// the tile's base + 2 (lane % 4)). The odd chain wins a tie only with a lower column; the tile
// wins against the running pair (earlier tiles, lower columns) only when strictly smaller.
template <int F>
__device__ __forceinline__ void cake_argmin_chains(float (&d)[F][2], i32 (&idx)[F][2],
                                                   const float (&m)[F][2][2],
                                                   const i32 (&j8)[F][2][2], i32 col) {
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float best = m[f][h][0];
      i32 c = j8[f][h][0];
      if (m[f][h][1] < best || (m[f][h][1] == best && j8[f][h][1] + 1 < c)) {
        best = m[f][h][1];
        c = j8[f][h][1] + 1;
      }
      if (best < d[f][h]) {
        d[f][h] = best;
        idx[f][h] = col + c;
      }
    }
  }
}

// The running (min, index) of each row lives in the four lanes of the row's quad, each over
// its own columns; merge them so every lane holds the row's minimum with the lowest index
// among equal values. (value, index) pairs are ordered lexicographically, so the merge is
// associative, and merging already merged lanes changes nothing.
template <int F>
__device__ __forceinline__ void cake_argmin_quad_merge(float (&d)[F][2], i32 (&idx)[F][2]) {
#pragma unroll
  for (int f = 0; f < F; ++f) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int m = 1; m <= 2; m *= 2) {
        const float od = __shfl_xor_sync(0xffffffffu, d[f][h], m);
        const i32 oi = __shfl_xor_sync(0xffffffffu, idx[f][h], m);
        if (od < d[f][h] || (od == d[f][h] && oi < idx[f][h])) {
          d[f][h] = od;
          idx[f][h] = oi;
        }
      }
    }
  }
}

#endif  // CAKE_SM90_TILES_CUH
