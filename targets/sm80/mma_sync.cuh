// Cake emitter support (sm_80 / sm_89 / sm_120a / sm_121a): cp.async tile copies, ldmatrix +
// mma.sync (bf16/f16 k16, tf32 k8, s8 and e4m3/e5m2 k32) on a warp-tiled register
// accumulator, and its bounds-checked store.
// Appended after the prelude and targets/emit/support.cuh (integer helpers, conversion traits).
#ifndef CAKE_EMIT_SM80_CUH
#define CAKE_EMIT_SM80_CUH

// ---------------------------------------------------------------- mbarriers before sm_90
// sm_80/sm_89 have mbarrier init/arrive/test_wait but not try_wait, the `_` sink,
// `.shared::cta` (PTX 7.8) or fence.mbarrier_init; the generated kernel's calls are renamed to
// these forms (cp.async writes through the generic proxy, so __syncthreads orders the init).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
__device__ __forceinline__ void cake_sm80_mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void cake_sm80_fence_mbar_init() {}

__device__ __forceinline__ void cake_sm80_mbar_arrive(u32 bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared.b64 st, [%0];\n}\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void cake_sm80_mbar_wait(u32 bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred p;\nCAKE_WAIT:\n"
      "mbarrier.test_wait.parity.shared.b64 p, [%0], %1;\n"
      "@!p bra CAKE_WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}
#define cake_mbar_init cake_sm80_mbar_init
#define cake_fence_mbar_init cake_sm80_fence_mbar_init
#define cake_mbar_arrive cake_sm80_mbar_arrive
#define cake_mbar_wait cake_sm80_mbar_wait
#endif

// ---------------------------------------------------------------- shared-memory layout

// Byte offset of (row, byte kb of the row) in one view stage laid out as derive-smem says:
// column blocks of ATOM bytes, each rows x SPAN bytes, 16-byte chunks XOR-swizzled by address
// bits [7, 10) within the block (the TMA/wgmma pattern); SPAN = the row when unswizzled.
template <int SPAN, int ATOM, bool SWIZZLED>
__device__ __forceinline__ u32 cake_view_offset(u32 row, u32 kb) {
  const u32 off = (kb / SPAN) * ATOM + row * SPAN + kb % SPAN;
  return SWIZZLED ? off ^ (((off >> 7) & (SPAN / 16 - 1)) << 4) : off;
}

// ---------------------------------------------------------------- cp.async tile copies

// Thread `tid` of THREADS copies its share of the ROWS x COLS tile of `t` at (row0, col0)
// into the stage at `dst`, 16 bytes at a time; chunks outside t are zero-filled (src-size 0),
// so tiles may hang over any edge. Rows of t must be 16-byte aligned (K % 8 == 0 for bf16).
template <int ROWS, int COLS, int ESIZE, int SPAN, int ATOM, bool SWIZZLED, int THREADS>
__device__ __forceinline__ void cake_copy_tile(u32 dst, const CakeTensor<2>& t, i32 row0,
                                               i32 col0, u32 tid) {
  constexpr int PER_ROW = COLS * ESIZE / 16;
  constexpr int CHUNKS = ROWS * PER_ROW;
  const long long rows = t.shape[0], cols = t.shape[1], ld = t.stride[0];
#pragma unroll
  for (int j = 0; j < (CHUNKS + THREADS - 1) / THREADS; ++j) {
    const int i = (int)tid + j * THREADS;
    if (CHUNKS % THREADS != 0 && i >= CHUNKS) break;
    const int r = i / PER_ROW, c = i % PER_ROW;
    const long long gr = (long long)row0 + r, gc = (long long)col0 + c * (16 / ESIZE);
    const long long left = (cols - gc) * ESIZE;
    const u32 bytes = (gr < rows && left > 0) ? (left < 16 ? (u32)left : 16u) : 0u;
    const char* src = (const char*)t.ptr + (bytes ? (gr * ld + gc) * ESIZE : 0);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     dst + cake_view_offset<SPAN, ATOM, SWIZZLED>((u32)r, (u32)(c * 16))),
                 "l"(src), "r"(bytes)
                 : "memory");
  }
}

// One arrival on `bar` once every cp.async this thread issued so far has landed (.noinc: the
// arrival counts against the barrier's expected count, which derive-barriers set to the
// role's threads per copy).
__device__ __forceinline__ void cake_cp_async_arrive(u32 bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" ::"r"(bar) : "memory");
}

// ---------------------------------------------------------------- ldmatrix + mma.sync

__device__ __forceinline__ void cake_ldmatrix_x4(u32 addr, u32 (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// One mma.sync form as a traits type: `acc` the accumulator element, `mma` one m16n8kK
// instruction (A: 4 b32 registers, B: 2, C/D: 4 for every form Cake emits; each register
// holds 4 bytes of K, so one instruction consumes 32 bytes of every operand row).
__device__ __forceinline__ void cake_ldmatrix_x2(u32 addr, u32 (&r)[4]) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(addr)
               : "memory");
}

#define CAKE_DEFINE_MMA_SYNC(NAME, SHAPE, TYPES, T, C)                                         \
  struct NAME {                                                                                \
    typedef T acc;                                                                             \
    static __device__ __forceinline__ void mma(T (&d)[4], const u32 (&a)[4], u32 b0, u32 b1) { \
      asm volatile("mma.sync.aligned." SHAPE ".row.col." TYPES " "                            \
                   "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"          \
                   : "+" C(d[0]), "+" C(d[1]), "+" C(d[2]), "+" C(d[3])                        \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));             \
    }                                                                                          \
  };
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k16_f32_bf16_bf16, "m16n8k16", "f32.bf16.bf16.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k16_f32_f16_f16, "m16n8k16", "f32.f16.f16.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k8_f32_tf32_tf32, "m16n8k8", "f32.tf32.tf32.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k32_s32_s8_s8, "m16n8k32", "s32.s8.s8.s32", i32, "r")
// e4m3/e5m2 (sm_89 and later, PTX 8.4), mixed freely.
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k32_f32_e4m3_e4m3, "m16n8k32", "f32.e4m3.e4m3.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k32_f32_e4m3_e5m2, "m16n8k32", "f32.e4m3.e5m2.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k32_f32_e5m2_e4m3, "m16n8k32", "f32.e5m2.e4m3.f32", float, "f")
CAKE_DEFINE_MMA_SYNC(CakeMma_m16n8k32_f32_e5m2_e5m2, "m16n8k32", "f32.e5m2.e5m2.f32", float, "f")
#undef CAKE_DEFINE_MMA_SYNC

// Operand geometry of one lm.mma: a view stage of rows x K (K-major), as derive-smem laid it out.
template <int SPAN_, int ATOM_, bool SWIZZLED_>
struct CakeOperand {
  static constexpr int SPAN = SPAN_, ATOM = ATOM_;
  static constexpr bool SWIZZLED = SWIZZLED_;
};

// acc (+)= A[a_row0 + 16 MT rows, K] * B[b_row0 + 8 NT rows, K]^T for this warp, K = 32 bytes
// x KSTEPS, with a, b the stage addresses. Per 32-byte K step and lane l: ldmatrix.x4 (b16, so
// in bytes: 8 rows x 16 B per matrix) of A rows l % 16 at byte 16 (l / 16) gives the A fragment,
// of B rows (l % 8) + 8 (l / 16) at byte 16 ((l / 8) % 2) the B fragments of two n8 tiles. In
// bytes the mma.sync A/B fragments of m16n8k16 (b16), m16n8k8 (tf32) and m16n8k32 (8-bit) are
// the same (register = 4 bytes of K of one row), so one load serves every MMA traits type. Accumulator fragment [mt][nt][i]: row
// 16 mt + l / 4 + 8 (i / 2), column 8 nt + 2 (l % 4) + i % 2.
template <int MT, int NT, int KSTEPS, class OA, class OB, class MMA>
__device__ __forceinline__ void cake_mma_sync_tile(typename MMA::acc (&acc)[MT][NT][4], u32 a, u32 b,
                                                   u32 a_row0, u32 b_row0) {
  const u32 lane = cake_lane_id();
#pragma unroll
  for (int ks = 0; ks < KSTEPS; ++ks) {
    u32 fa[MT][4], fb[(NT + 1) / 2][4];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
      cake_ldmatrix_x4(a + cake_view_offset<OA::SPAN, OA::ATOM, OA::SWIZZLED>(
                               a_row0 + 16 * mt + lane % 16, 32 * ks + 16 * (lane / 16)),
                       fa[mt]);
#pragma unroll
    for (int np = 0; np < (NT + 1) / 2; ++np) {
      const u32 addr = b + cake_view_offset<OB::SPAN, OB::ATOM, OB::SWIZZLED>(
                               b_row0 + 16 * np + lane % 8 + 8 * (lane / 16),
                               32 * ks + 16 * ((lane / 8) % 2));
      if (2 * np + 1 < NT) cake_ldmatrix_x4(addr, fb[np]);
      else cake_ldmatrix_x2(addr, fb[np]);  // an odd last n8 tile: lanes 0-15's rows only
    }
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const u32 b0 = fb[nt / 2][2 * (nt % 2)], b1 = fb[nt / 2][2 * (nt % 2) + 1];
        MMA::mma(acc[mt][nt], fa[mt], b0, b1);
      }
  }
}

template <int MT, int NT, class T>
__device__ __forceinline__ void cake_zero_acc(T (&acc)[MT][NT][4]) {
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[mt][nt][i] = T(0);
}

// This warp's accumulator fragments (layout above) converted by Out into rows [row0, row0 + 16 MT)
// and columns [col0, col0 + 8 NT) of the row-major rank-2 tensor t; elements outside t are skipped.
template <int MT, int NT, class Out, class T>
__device__ __forceinline__ void cake_store_mma_sync_tile(const T (&acc)[MT][NT][4],
                                                         const CakeTensor<2>& t, i32 row0,
                                                         i32 col0) {
  typedef typename Out::elem E;
  const u32 lane = cake_lane_id();
  const long long rows = t.shape[0], cols = t.shape[1], ld = t.stride[0];
  const bool pairs = Out::pairs_ok(t.ptr, ld) && (col0 % 2) == 0;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long r = (long long)row0 + 16 * mt + lane / 4 + 8 * h;
      if (r >= rows) continue;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const long long c = (long long)col0 + 8 * nt + 2 * (lane % 4);
        E* const p = (E*)t.ptr + r * ld + c;
        const T lo = acc[mt][nt][2 * h], hi = acc[mt][nt][2 * h + 1];
        if (pairs && c + 1 < cols) {
          Out::pair(p, lo, hi);
        } else {
          if (c < cols) Out::one(p, lo);
          if (c + 1 < cols) Out::one(p + 1, hi);
        }
      }
    }
}

#endif  // CAKE_EMIT_SM80_CUH
