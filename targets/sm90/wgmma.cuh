// Cake emitter support (sm_90a): wgmma accumulator fragment stores. Appended after the
// prelude and targets/emit/support.cuh (index arithmetic, store traits); no #include.
#ifndef CAKE_EMIT_SM90_CUH
#define CAKE_EMIT_SM90_CUH

// One warpgroup's wgmma m64nN accumulator fragment (f32, or s32 of an s8 MMA) (N/2 registers per thread) written to
// rows [row0, row0 + 64) and columns [col0, col0 + N) of the row-major rank-2 tensor `t`,
// converted by `Out`. Elements outside t.shape are skipped, so any tile of any tensor is safe.
// Fragment layout (PTX wgmma D, m64nN f32): register i of lane l in warp w of the warpgroup
// holds row 16 w + l / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 (l % 4) + (i & 1).
template <int N, class Out, class T>
__device__ __forceinline__ void cake_store_wgmma_tile(const T (&d)[N / 2], const CakeTensor<2>& t,
                                                      i32 row0, i32 col0) {
  typedef typename Out::elem E;
  const u32 lane = cake_lane_id();
  const i32 row = row0 + 16 * (i32)(cake_warp_id() % 4u) + (i32)(lane / 4u);
  const i32 col = col0 + 2 * (i32)(lane % 4u);
  const long long rows = t.shape[0], cols = t.shape[1], ld = t.stride[0];
  E* const p0 = (E*)t.ptr + row * ld + col;
  E* const p1 = p0 + 8 * ld;
  const bool pairs = Out::pairs_ok(t.ptr, ld);
  if (pairs && row0 + 64 <= rows && col0 + N <= cols) {  // a whole tile: no checks
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
      Out::pair(p0 + 8 * j, d[4 * j], d[4 * j + 1]);
      Out::pair(p1 + 8 * j, d[4 * j + 2], d[4 * j + 3]);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long r = row + 8 * h, c = col + 8 * j;
      if (r >= rows) continue;
      E* const p = (h ? p1 : p0) + 8 * j;
      const T lo = d[4 * j + 2 * h], hi = d[4 * j + 2 * h + 1];
      if (pairs && c + 1 < cols) {
        Out::pair(p, lo, hi);
      } else {
        if (c < cols) Out::one(p, lo);
        if (c + 1 < cols) Out::one(p + 1, hi);
      }
    }
  }
}

// ---------------------------------------------------------------- deferred epilogue stores
// A whole tile of a 16-bit output can be converted now and written later, a part at a time
// under the next tile's wgmma groups (the tensor cores keep running through the epilogue).

// Whether the fragment stores of cake_store_wgmma_tile take the unchecked path for this tile.
template <int N, class Out>
__device__ __forceinline__ bool cake_whole_tile(const CakeTensor<2>& t, i32 row0, i32 col0) {
  return Out::pairs_ok(t.ptr, t.stride[0]) && row0 + 64 <= t.shape[0] && col0 + N <= t.shape[1];
}

// A packed tile (word 2 j + h: row r + 8 h, columns 8 j + 2 (l % 4), + 1) written now, with
// cake_store_wgmma_tile's bounds checks: a tail tile, or rows not aligned for pair stores.
template <int N, class Out>
__device__ __forceinline__ void cake_store_packed_tile(const u32 (&out)[N / 4], const CakeTensor<2>& t,
                                                       i32 row0, i32 col0) {
  const u32 lane = cake_lane_id();
  const i32 row = row0 + 16 * (i32)(cake_warp_id() % 4u) + (i32)(lane / 4u);
  const i32 col = col0 + 2 * (i32)(lane % 4u);
  const long long rows = t.shape[0], cols = t.shape[1], ld = t.stride[0];
  const bool pairs = Out::pairs_ok(t.ptr, ld);
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long r = row + 8 * h, c = col + 8 * j;
      if (r >= rows) continue;
      u16* const p = (u16*)t.ptr + r * ld + c;
      const u32 w = out[2 * j + h];
      if (pairs && c + 1 < cols) {
        *(u32*)p = w;
      } else {
        if (c < cols) p[0] = (u16)w;
        if (c + 1 < cols) p[1] = (u16)(w >> 16);
      }
    }
  }
}

// Store the next of PARTS column parts of a packed whole tile (`parts` counts those left).
// The part is selected by unrolled comparisons so `out` stays in registers.
template <int N, int PARTS, class Out>
__device__ __forceinline__ void cake_store_packed_part(const u32 (&out)[N / 4], const CakeTensor<2>& t,
                                                       i32 row0, i32 col0, u32& parts) {
  typedef typename Out::elem E;
  const u32 lane = cake_lane_id();
  const i32 row = row0 + 16 * (i32)(cake_warp_id() % 4u) + (i32)(lane / 4u);
  E* const p0 = (E*)t.ptr + row * t.stride[0] + col0 + 2 * (i32)(lane % 4u);
  E* const p1 = p0 + 8 * t.stride[0];
  const u32 q = PARTS - parts;
#pragma unroll
  for (u32 part = 0; part < PARTS; ++part) {
    if (part == q) {
#pragma unroll
      for (int j = part * (N / 8 / PARTS); j < (int)(part + 1) * (N / 8 / PARTS); ++j) {
        *(u32*)(p0 + 8 * j) = out[2 * j];
        *(u32*)(p1 + 8 * j) = out[2 * j + 1];
      }
    }
  }
  --parts;
}

#endif  // CAKE_EMIT_SM90_CUH
