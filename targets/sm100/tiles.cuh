// Cake register-tile helpers (sm_100a / sm_103a): vectors in the tcgen05.ld 32x32b layout,
// their loads and Σx² of a row in SMEM. Appended after sm100/tcgen05.cuh and
// targets/emit/tiles.cuh (cake_run_offset, cake_from_bits, cake_sum_sq_chunk_bf16,
// cake_store_row) by the emitter; no #include.
//
// Layout: a 4-warp role, one warp per TMEM lane quarter; thread (q = warp % 4, lane l) owns
// row 32 q + l of every 128-row tile. An (M, 1) vector is one `E` per thread; a (1, N) vector
// is `E v[N]`, every column in every thread, or, staged in SMEM, read 32 columns at a time.
#ifndef CAKE_EMIT_TILES_SM100_CUH
#define CAKE_EMIT_TILES_SM100_CUH

// Pin registers a tcgen05.ld wrote after its tcgen05.wait::ld (both asm volatile, so they stay
// in order): no use of them can be scheduled above the wait.
template <int R>
__device__ __forceinline__ void cake_fence_regs(u32 (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// 32 consecutive 4-byte words of SMEM from `addr` (16-byte aligned, as every view stage is):
// 32 columns of a (1, N) stage, read by a row's thread next to the TMEM chunk they combine
// with. Every lane reads the same words, so each ld.shared.v4 is one broadcast transaction.
__device__ __forceinline__ void cake_lds_x32(u32 addr, u32 (&d)[32]) {
#pragma unroll
  for (int i = 0; i < 32; i += 4)
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(d[i]), "=r"(d[i + 1]), "=r"(d[i + 2]), "=r"(d[i + 3])
                 : "r"(addr + 4u * i));
}

// (1, N) vector: elements c[R-1] + j of t's last dimension; outside the tensor, `other`. Every
// lane reads the same addresses (one broadcast transaction per load). A run wholly inside a
// contiguous, 16-byte aligned row is read 4 elements per load (every centroid tile but the
// last); anything else element by element with bounds checks.
template <int N, int R, class E>
__device__ __forceinline__ void cake_load_cols_all(E (&out)[N], const CakeTensor<R>& t,
                                                   const i32 (&c)[R], E other) {
  static_assert(sizeof(E) == 4 && N % 4 == 0, "vectors of 4-byte elements, N % 4 == 0");
  const long long off = cake_run_offset<R>(t, c);
  const long long n = t.shape[R - 1], ld = t.stride[R - 1];
  const i32 col0 = c[R - 1];
  const E* const p = (const E*)t.ptr + off;
  if (off >= 0 && ld == 1 && col0 >= 0 && col0 + N <= n && ((u64)(p + col0) & 15) == 0) {
#pragma unroll
    for (int j = 0; j < N; j += 4) {
      const uint4 v = *(const uint4*)(p + col0 + j);
      cake_from_bits(out[j], v.x);
      cake_from_bits(out[j + 1], v.y);
      cake_from_bits(out[j + 2], v.z);
      cake_from_bits(out[j + 3], v.w);
    }
    return;
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const i32 col = col0 + j;
    out[j] = (off >= 0 && col >= 0 && col < n) ? p[col * ld] : other;
  }
}

// Σ x² over row `row` of a bf16 SMEM stage stored as ATOMS column blocks of rows × PITCH bytes
// (derive-smem's layout), in logical chunk order (cake_chunk_addr: equal rows, equal sums).
template <u32 ATOMS, u32 ATOM_BYTES, u32 PITCH, u32 SWZ>
__device__ __forceinline__ float cake_sum_sq_row_bf16(u32 stage, i32 row) {
  float s = 0.f;
#pragma unroll
  for (u32 a = 0; a < ATOMS; ++a) {
#pragma unroll
    for (u32 chunk = 0; chunk < PITCH / 16u; ++chunk)
      s = cake_sum_sq_chunk_bf16(cake_chunk_addr<PITCH, SWZ>(stage + a * ATOM_BYTES, (u32)row, chunk), s);
  }
  return s;
}

#endif  // CAKE_EMIT_TILES_SM100_CUH
