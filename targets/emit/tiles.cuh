// Cake register-tile helpers shared by every target family: element functions (one PTX
// instruction each, or a short fixed sequence), tile stores with bounds, and SMEM row reads.
// Appended after the prelude and the family's MMA header by the emitter; no #include.
// Layouts (which registers hold which elements) are the families' (targets/sm*/tiles.py).
#ifndef CAKE_EMIT_TILES_CUH
#define CAKE_EMIT_TILES_CUH

// ---------------------------------------------------------------- element functions

__device__ __forceinline__ float cake_ex2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_lg2(float x) {
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_sqrt(float x) {
  float y;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_rsqrt(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_rcp(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_tanh(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float cake_exp(float x) { return cake_ex2(x * 1.4426950408889634f); }
__device__ __forceinline__ float cake_log(float x) { return cake_lg2(x) * 0.6931471805599453f; }
// 1 / (1 + e^-x): ex2 of -x log2(e), one add, rcp.
__device__ __forceinline__ float cake_sigmoid(float x) {
  return cake_rcp(1.0f + cake_ex2(x * -1.4426950408889634f));
}
__device__ __forceinline__ float cake_silu(float x) { return x * cake_sigmoid(x); }
// The tanh form: x/2 (1 + tanh(√(2/π) (x + 0.044715 x³))), the inner polynomial as FMAs.
__device__ __forceinline__ float cake_gelu(float x) {
  const float u = x * fmaf(0.0356774081f, x * x, 0.7978845608f);
  const float h = 0.5f * x;
  return fmaf(h, cake_tanh(u), h);
}

// ---------------------------------------------------------------- global memory

// Offset of the run at element coordinates c[0..R-2] (the last coordinate is the run's
// start), or -1 when one of them lies outside the tensor.
template <int R>
__device__ __forceinline__ long long cake_run_offset(const CakeTensor<R>& t, const i32 (&c)[R]) {
  long long off = 0;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) {
    if (c[d] < 0 || c[d] >= t.shape[d]) return -1;
    off += (long long)c[d] * t.stride[d];
  }
  return off;
}

__device__ __forceinline__ void cake_from_bits(float& x, u32 bits) { x = __uint_as_float(bits); }
__device__ __forceinline__ void cake_from_bits(i32& x, u32 bits) { x = (i32)bits; }

// (M, 1) vector: this thread's value `x` (of tile row `row`) stored to element c[R-1] + row
// of t's last dimension; rows outside the tensor are skipped.
template <int R, class E>
__device__ __forceinline__ void cake_store_row(E x, const CakeTensor<R>& t, const i32 (&c)[R],
                                               i32 row) {
  const long long off = cake_run_offset<R>(t, c);
  const i32 r = c[R - 1] + row;
  if (off >= 0 && r >= 0 && r < t.shape[R - 1]) ((E*)t.ptr)[off + r * t.stride[R - 1]] = x;
}

// Element c[R-1] + col of t's last dimension at c[0..R-2]; outside the tensor, `other`.
template <int R, class E>
__device__ __forceinline__ E cake_load_elem(const CakeTensor<R>& t, const i32 (&c)[R], i32 col,
                                            E other) {
  const long long off = cake_run_offset<R>(t, c);
  const i32 x = c[R - 1] + col;
  return (off >= 0 && x >= 0 && x < t.shape[R - 1]) ? ((const E*)t.ptr)[off + (long long)x * t.stride[R - 1]]
                                                     : other;
}

// Two adjacent elements (columns col, col + 1 of row `row`) of a tile stored into the rank-2
// tensor `t`, converted by `Out`: one 4- or 8-byte store when both are inside and the row
// allows it, else each inside element alone. No early return: a warp leaves converged.
template <class Out>
__device__ __forceinline__ void cake_store_pair(const CakeTensor<2>& t, i32 row, i32 col,
                                                float x0, float x1) {
  typedef typename Out::elem E;
  if (row >= 0 && row < t.shape[0]) {
    E* const p = (E*)t.ptr + (long long)row * t.stride[0];
    const long long ld = t.stride[1], n = t.shape[1];
    if (col >= 0 && col + 1 < n && ld == 1 && Out::pairs_ok(p + col, t.stride[0])) {
      Out::pair(p + col, x0, x1);
    } else {
      if (col >= 0 && col < n) Out::one(p + col * ld, x0);
      if (col + 1 >= 0 && col + 1 < n) Out::one(p + (col + 1) * ld, x1);
    }
  }
}

// (1, N) vector: this thread's value `x` (of tile column `col`) stored to element
// c[R-1] + col of t's last dimension, converted by `Out`; columns outside are skipped.
template <int R, class Out>
__device__ __forceinline__ void cake_store_col(float x, const CakeTensor<R>& t, const i32 (&c)[R],
                                               i32 col) {
  typedef typename Out::elem E;
  const long long off = cake_run_offset<R>(t, c);
  const i32 k = c[R - 1] + col;
  if (off >= 0 && k >= 0 && k < t.shape[R - 1]) Out::one((E*)t.ptr + off + (long long)k * t.stride[R - 1], x);
}

// The four elements of a 16-byte vector (float4, int4) into x[0..3].
template <class V, class E>
__device__ __forceinline__ void cake_unpack4(const V v, E (&x)[4]) {
  x[0] = v.x;
  x[1] = v.y;
  x[2] = v.z;
  x[3] = v.w;
}

// How an (M, N) block load reads its tensor's elements: the stored type, one element widened
// to the register type, and two adjacent ones in one access when the address allows it.
struct CakeInF32 {
  typedef float elem;
  typedef float reg;
  static __device__ __forceinline__ float one(const float* p) { return *p; }
  static __device__ __forceinline__ bool pairs_ok(const void* p) { return ((u64)p & 7) == 0; }
  static __device__ __forceinline__ void pair(const float* p, float (&x)[2]) {
    const float2 v = *(const float2*)p;
    x[0] = v.x;
    x[1] = v.y;
  }
  static __device__ __forceinline__ void quad(const float* p, float (&x)[4]) {
    cake_unpack4(*(const float4*)p, x);
  }
};
struct CakeInI32 {
  typedef i32 elem;
  typedef i32 reg;
  static __device__ __forceinline__ i32 one(const i32* p) { return *p; }
  static __device__ __forceinline__ bool pairs_ok(const void* p) { return ((u64)p & 7) == 0; }
  static __device__ __forceinline__ void pair(const i32* p, i32 (&x)[2]) {
    const int2 v = *(const int2*)p;
    x[0] = v.x;
    x[1] = v.y;
  }
  static __device__ __forceinline__ void quad(const i32* p, i32 (&x)[4]) {
    cake_unpack4(*(const int4*)p, x);
  }
};
struct CakeInBf16 {
  typedef u16 elem;
  typedef float reg;
  static __device__ __forceinline__ float one(const u16* p) { return __uint_as_float((u32)*p << 16); }
  static __device__ __forceinline__ bool pairs_ok(const void* p) { return ((u64)p & 3) == 0; }
  static __device__ __forceinline__ void pair(const u16* p, float (&x)[2]) {
    const u32 v = *(const u32*)p;
    x[0] = __uint_as_float(v << 16);
    x[1] = __uint_as_float(v & 0xffff0000u);
  }
};
struct CakeInF16 {
  typedef u16 elem;
  typedef float reg;
  static __device__ __forceinline__ float one(const u16* p) {
    float y;
    asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"(*p));
    return y;
  }
  static __device__ __forceinline__ bool pairs_ok(const void* p) { return ((u64)p & 3) == 0; }
  static __device__ __forceinline__ void pair(const u16* p, float (&x)[2]) {
    x[0] = one(p);
    x[1] = one(p + 1);
  }
};

// Element c[R-1] + i of the run at c, read and widened by `In`; outside the tensor, `other`.
template <int R, class In>
__device__ __forceinline__ typename In::reg cake_load_run_elem(const CakeTensor<R>& t,
                                                               const i32 (&c)[R], i32 i,
                                                               typename In::reg other) {
  const long long off = cake_run_offset<R>(t, c);
  const i32 x = c[R - 1] + i;
  return (off >= 0 && x >= 0 && x < t.shape[R - 1])
             ? In::one((const typename In::elem*)t.ptr + off + (long long)x * t.stride[R - 1])
             : other;
}

// An (M, N) block of t at element coordinates c (the leading ones element indices, the last
// two the block's first row and column): its element (0, 0) at offset `base`, rows `ld` and
// columns `ldc` apart. The elements inside the tensor form a rectangle of the block, rows
// [r_lo, r_hi) by columns [c_lo, c_hi) (empty when a leading coordinate is outside), so
// bounds are decided once per block and a checked access compares its row and column with
// it, the row's half shared by every access of the row. `whole`: every element is inside
// with the last dimension contiguous (and, for VEC > 1, every run of VEC columns from a
// multiple of VEC aligned to one VEC-element access); a whole block is read or written by plain accesses, one uniform
// branch for the tile instead of a check per element, and any other block takes the
// checked helpers below, so a ragged tail keeps its exact semantics.
struct CakeBlock {
  long long base;
  long long ld;
  long long ldc;
  i32 r_lo, r_hi, c_lo, c_hi;
  bool whole;
};

// [lo, hi) of 0 <= i < n with 0 <= x0 + i < extent, as i32 in [0, n].
__device__ __forceinline__ void cake_block_span(long long x0, i32 n, long long extent, i32& lo,
                                                i32& hi) {
  lo = (i32)(x0 >= 0 ? 0 : (-x0 < n ? -x0 : n));
  const long long left = extent - x0;
  hi = (i32)(left <= 0 ? 0 : (left < n ? left : n));
  if (hi < lo) hi = lo;
}

template <int R, class E, int VEC>
__device__ __forceinline__ CakeBlock cake_block(const CakeTensor<R>& t, const i32 (&c)[R],
                                                i32 rows, i32 cols) {
  bool in = true;
  long long off = 0;
#pragma unroll
  for (int d = 0; d < R - 2; ++d) {
    in = in && c[d] >= 0 && c[d] < t.shape[d];
    off += (long long)c[d] * t.stride[d];
  }
  const long long r0 = c[R - 2], k0 = c[R - 1], ld = t.stride[R - 2], ldc = t.stride[R - 1];
  off += r0 * ld + k0 * ldc;
  CakeBlock b;
  b.base = off;
  b.ld = ld;
  b.ldc = ldc;
  cake_block_span(r0, rows, t.shape[R - 2], b.r_lo, b.r_hi);
  cake_block_span(k0, cols, t.shape[R - 1], b.c_lo, b.c_hi);
  if (!in) b.r_hi = b.r_lo;
  bool whole = ldc == 1 && b.r_lo == 0 && b.r_hi == rows && b.c_lo == 0 && b.c_hi == cols;
  if (VEC > 1)
    whole = whole && ld % VEC == 0 && ((u64)((const E*)t.ptr + off) % (VEC * sizeof(E))) == 0;
  b.whole = whole;
  return b;
}

__device__ __forceinline__ bool cake_block_in(const CakeBlock& b, i32 row, i32 col) {
  return row >= b.r_lo && row < b.r_hi && col >= b.c_lo && col < b.c_hi;
}

// Checked accesses of block b: element (row, col), outside `other`; the pair (row, col),
// (row, col + 1), one access when both are inside and contiguous and aligned, else each
// alone (outside: `other` read, nothing stored). No early return: a warp leaves converged.
template <int R, class In>
__device__ __forceinline__ typename In::reg cake_block_elem(const CakeTensor<R>& t,
                                                            const CakeBlock& b, i32 row, i32 col,
                                                            typename In::reg other) {
  return cake_block_in(b, row, col)
             ? In::one((const typename In::elem*)t.ptr + b.base + (long long)row * b.ld +
                       (long long)col * b.ldc)
             : other;
}
template <int R, class In>
__device__ __forceinline__ void cake_block_pair(const CakeTensor<R>& t, const CakeBlock& b,
                                                i32 row, i32 col, typename In::reg (&x)[2],
                                                typename In::reg other) {
  const bool in0 = cake_block_in(b, row, col), in1 = cake_block_in(b, row, col + 1);
  const typename In::elem* const p =
      (const typename In::elem*)t.ptr + b.base + (long long)row * b.ld + (long long)col * b.ldc;
  if (in0 && in1 && b.ldc == 1 && In::pairs_ok(p)) {
    In::pair(p, x);
  } else {
    x[0] = in0 ? In::one(p) : other;
    x[1] = in1 ? In::one(p + b.ldc) : other;
  }
}
template <int R, class Out>
__device__ __forceinline__ void cake_block_store_pair(const CakeTensor<R>& t, const CakeBlock& b,
                                                      i32 row, i32 col, float x0, float x1) {
  const bool in0 = cake_block_in(b, row, col), in1 = cake_block_in(b, row, col + 1);
  typename Out::elem* const p =
      (typename Out::elem*)t.ptr + b.base + (long long)row * b.ld + (long long)col * b.ldc;
  if (in0 && in1 && b.ldc == 1 && Out::pairs_ok(p, b.ld)) {
    Out::pair(p, x0, x1);
  } else {
    if (in0) Out::one(p, x0);
    if (in1) Out::one(p + b.ldc, x1);
  }
}

// The accesses of a whole block b (cake_block; VEC for the pairs and runs) with no bounds:
// element (row, col), the pair (row, col), (row, col + 1) with col even, the run of N = 4
// columns from col a multiple of 4 (4-byte elements: one 16-byte access), read or stored.
template <int R, class In>
__device__ __forceinline__ typename In::reg cake_whole_elem(const CakeTensor<R>& t,
                                                            const CakeBlock& b, i32 row, i32 col) {
  return In::one((const typename In::elem*)t.ptr + b.base + (long long)row * b.ld + col);
}
template <int R, class In>
__device__ __forceinline__ void cake_whole_pair(const CakeTensor<R>& t, const CakeBlock& b,
                                                i32 row, i32 col, typename In::reg (&x)[2]) {
  In::pair((const typename In::elem*)t.ptr + b.base + (long long)row * b.ld + col, x);
}
template <int R, class Out>
__device__ __forceinline__ void cake_whole_store_pair(const CakeTensor<R>& t, const CakeBlock& b,
                                                      i32 row, i32 col, float x0, float x1) {
  Out::pair((typename Out::elem*)t.ptr + b.base + (long long)row * b.ld + col, x0, x1);
}

// A run of n elements along t's last dimension from element coordinates c, as a CakeBlock of
// one row: element i at base + i * ld, whole when every element lies inside the tensor. A
// vector load of a whole run reads with no per-element bounds (cake_whole_run_elem): loads
// under a bounds test can compile to branches, each waiting for its load before the next
// one issues.
template <int R>
__device__ __forceinline__ CakeBlock cake_run_block(const CakeTensor<R>& t, const i32 (&c)[R],
                                                   i32 n) {
  bool whole = true;
  long long off = 0;
#pragma unroll
  for (int d = 0; d < R - 1; ++d) {
    whole = whole && c[d] >= 0 && c[d] < t.shape[d];
    off += (long long)c[d] * t.stride[d];
  }
  const long long k0 = c[R - 1], ld = t.stride[R - 1];
  whole = whole && k0 >= 0 && k0 + n <= t.shape[R - 1];
  CakeBlock b = {};
  b.base = off + k0 * ld;
  b.ld = ld;
  b.whole = whole;
  return b;
}
template <int R, class In>
__device__ __forceinline__ typename In::reg cake_whole_run_elem(const CakeTensor<R>& t,
                                                                const CakeBlock& b, i32 i) {
  return In::one((const typename In::elem*)t.ptr + b.base + (long long)i * b.ld);
}
template <int R, class In, int N>
__device__ __forceinline__ void cake_whole_run(const CakeTensor<R>& t, const CakeBlock& b,
                                               i32 row, i32 col, typename In::reg (&x)[N]) {
  static_assert(N == 4, "runs of four 4-byte elements");
  In::quad((const typename In::elem*)t.ptr + b.base + (long long)row * b.ld + col, x);
}
template <int R, class Out, int N>
__device__ __forceinline__ void cake_whole_store_run(const CakeTensor<R>& t, const CakeBlock& b,
                                                     i32 row, i32 col, const float (&x)[N]) {
  static_assert(N == 4, "runs of four 4-byte elements");
  Out::quad((typename Out::elem*)t.ptr + b.base + (long long)row * b.ld + col, x);
}

// ---------------------------------------------------------------- shared memory

__device__ __forceinline__ u32 cake_lds_b32(u32 addr) {
  u32 x;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(x) : "r"(addr));
  return x;
}

// s + Σ x² over the 8 bf16 values of the 16-byte SMEM chunk at `addr`.
__device__ __forceinline__ float cake_sum_sq_chunk_bf16(u32 addr, float s) {
  u32 x[4];
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(x[0]), "=r"(x[1]), "=r"(x[2]), "=r"(x[3])
               : "r"(addr));
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float lo = __uint_as_float(x[k] << 16), hi = __uint_as_float(x[k] & 0xffff0000u);
    s = fmaf(lo, lo, s);
    s = fmaf(hi, hi, s);
  }
  return s;
}

// Address of logical 16-byte chunk `chunk` of row `row` in an atom of rows × PITCH bytes whose
// swizzle XORs the chunk index with address bits 7 and up (SWZ: 7 for 128B, 3 for 64B, 1 for
// 32B, 0 for none). Reading rows in logical order makes a row's sum independent of where the
// row sits, so equal rows get bit-equal sums (equal centroids tie exactly).
template <u32 PITCH, u32 SWZ>
__device__ __forceinline__ u32 cake_chunk_addr(u32 atom, u32 row, u32 chunk) {
  return atom + row * PITCH + 16u * (chunk ^ (((row * PITCH) >> 7) & SWZ));
}

// Σ x² over row `row` of a bf16 SMEM stage stored as ATOMS column blocks of rows × PITCH bytes
// (derive-smem's layout), split over the four lanes of a quad (lane q sums logical chunks q,
// q + 4, ...), then added across the quad in the same order on every row.
template <u32 ATOMS, u32 ATOM_BYTES, u32 PITCH, u32 SWZ>
__device__ __forceinline__ float cake_sum_sq_quad_bf16(u32 stage, u32 row) {
  const u32 q = cake_lane_id() % 4u;
  float s = 0.f;
#pragma unroll
  for (u32 a = 0; a < ATOMS; ++a) {
#pragma unroll
    for (u32 c = 0; c < PITCH / 16u; c += 4u) {
      const u32 chunk = c + q;
      if (chunk >= PITCH / 16u) break;
      s = cake_sum_sq_chunk_bf16(cake_chunk_addr<PITCH, SWZ>(stage + a * ATOM_BYTES, row, chunk), s);
    }
  }
  s += __shfl_xor_sync(0xffffffffu, s, 1);
  s += __shfl_xor_sync(0xffffffffu, s, 2);
  return s;
}

// Shared address of element (row, col) of a stage in derive-smem's layout: column blocks of
// ROWS rows x SPAN bytes (SPAN: the swizzle span, or the whole row when unswizzled), the
// 16-byte chunk index XORed with address bits 7 and up (SWZ: 7 for 128B, 3 for 64B, 1 for
// 32B, 0 for none) -- where a TMA load of the view would have put it and where the MMA
// descriptor or a TMA store reads it.
template <u32 ROWS, u32 SPAN, u32 SWZ, u32 ELEM>
__device__ __forceinline__ u32 cake_stage_addr(u32 stage, u32 row, u32 col) {
  const u32 b = col * ELEM;
  const u32 line = (b / SPAN) * (ROWS * SPAN) + row * SPAN;
  const u32 in = b % SPAN;
  return stage + line + ((((in >> 4) ^ ((line >> 7) & SWZ)) << 4) | (in & 15u));
}

#endif  // CAKE_EMIT_TILES_CUH

// ---------------------------------------------------------------- split-K (`T.split_store`)

// The linear index of tile (tm, tn) of `out` in tiles `cols` wide: its arrival counter.
__device__ __forceinline__ long long cake_split_tile(const CakeTensor<2>& out, i32 tm, i32 tn,
                                                     i32 cols) {
  return (long long)tm * ((out.shape[1] + cols - 1) / cols) + tn;
}

// A workspace [parts, >= out rows, >= out cols], a part in [0, parts) and a counter per tile,
// or the kernel stops here (__trap): partials written past a short workspace, or arrivals
// on a counter past the end, would be a wrong sum with no error. The route allocates them
// (docs/language.md, "Split-K").
__device__ __forceinline__ void cake_split_check(const CakeTensor<2>& out, const CakeTensor<3>& w,
                                                 const CakeTensor<1>& counters, i32 part,
                                                 i32 parts, long long tile) {
  if (parts < 1 || part < 0 || part >= parts || w.shape[0] < parts || w.shape[1] < out.shape[0] ||
      w.shape[2] < out.shape[1] || tile < 0 || tile >= counters.shape[0])
    __trap();
}

// Two elements of one partial into w[part]: (row, col) and (row, col + 1), or with T (a
// transposed store) (row, col) and (row + 1, col); elements outside `out` are not written
// (nobody reads them).
template <bool T>
__device__ __forceinline__ void cake_split_put(const CakeTensor<3>& w, const CakeTensor<2>& out,
                                               i32 part, i32 row, i32 col, float x0, float x1) {
  float* const p = (float*)w.ptr + (long long)part * w.stride[0];
  const long long m = out.shape[0], n = out.shape[1], s0 = w.stride[1], s1 = w.stride[2];
  if (!T && row >= 0 && row < m && col >= 0 && col + 1 < n && s1 == 1 &&
      ((u64)(p + row * s0 + col) & 7) == 0) {
    *(float2*)(p + row * s0 + col) = make_float2(x0, x1);
  } else {
    const i32 r1 = T ? row + 1 : row, c1 = T ? col : col + 1;
    if (row >= 0 && row < m && col >= 0 && col < n) p[row * s0 + col * s1] = x0;
    if (r1 >= 0 && r1 < m && c1 >= 0 && c1 < n) p[r1 * s0 + c1 * s1] = x1;
  }
}

// One arrival on counters[tile] (a gpu-scope atomic, after the role's fences and barrier):
// true for the arrival that completes `parts`, which also resets the counter to 0 so the
// next launch finds it as this one did.
__device__ __forceinline__ int cake_split_arrive(const CakeTensor<1>& counters, long long tile,
                                                 i32 parts) {
  int* const c = (int*)counters.ptr + tile * counters.stride[0];
  const bool last = atomicAdd(c, 1) == parts - 1;
  if (last) atomicExch(c, 0);
  return last ? 1 : 0;
}

// Part q's partials of the two elements cake_split_put<T> wrote (0 for an element outside
// `out`, which nobody stores); the caller adds the parts in order (bitwise the same whichever
// CTA arrived last). Read at L2 (ld.global.cg: other SMs wrote them).
template <bool T>
__device__ __forceinline__ float2 cake_split_get(const CakeTensor<3>& w, const CakeTensor<2>& out,
                                                 i32 q, i32 row, i32 col) {
  const long long m = out.shape[0], n = out.shape[1], s0 = w.stride[1], s1 = w.stride[2];
  const i32 r1 = T ? row + 1 : row, c1 = T ? col : col + 1;
  const bool in0 = row >= 0 && row < m && col >= 0 && col < n;
  const bool in1 = r1 >= 0 && r1 < m && c1 >= 0 && c1 < n;
  const float* const p = (const float*)w.ptr + (long long)q * w.stride[0];
  if (!T && in0 && in1 && s1 == 1 && ((u64)(p + row * s0 + col) & 7) == 0)
    return __ldcg((const float2*)(p + row * s0 + col));
  return make_float2(in0 ? __ldcg(p + row * s0 + col * s1) : 0.0f,
                     in1 ? __ldcg(p + r1 * s0 + c1 * s1) : 0.0f);
}

// The two sums stored to `out` where cake_split_put<T> put their partials.
template <bool T, class Out>
__device__ __forceinline__ void cake_split_out(const CakeTensor<2>& out, i32 row, i32 col,
                                               float x0, float x1) {
  if (!T) {
    cake_store_pair<Out>(out, row, col, x0, x1);
  } else {
    typedef typename Out::elem E;
    E* const p = (E*)out.ptr;
    const long long m = out.shape[0], n = out.shape[1];
    const long long s0 = out.stride[0], s1 = out.stride[1];
    if (row >= 0 && row < m && col >= 0 && col < n) Out::one(p + row * s0 + col * s1, x0);
    if (row + 1 >= 0 && row + 1 < m && col >= 0 && col < n)
      Out::one(p + (row + 1) * s0 + col * s1, x1);
  }
}
