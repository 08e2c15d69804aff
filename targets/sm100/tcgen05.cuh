// Cake emitter support (sm_100a / sm_103a): tcgen05 and Tensor Memory. Appended after the
// prelude and targets/emit/support.cuh (integer helpers, conversion traits); no #include.
#ifndef CAKE_EMIT_SM100_CUH
#define CAKE_EMIT_SM100_CUH

// ---------------------------------------------------------------- TMEM allocation (one warp)

// tcgen05.alloc writes the allocated TMEM address into shared memory at `slot`.
template <u32 COLS>
__device__ __forceinline__ void cake_tmem_alloc(u32 slot) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(slot),
               "n"(COLS) : "memory");
  // One CTA per SM allocates: let a later CTA's alloc proceed without waiting for this one.
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}

template <u32 COLS>
__device__ __forceinline__ void cake_tmem_dealloc(u32 taddr) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "n"(COLS)
               : "memory");
}

// Order tcgen05 operations around thread synchronisation (mbarrier waits, bar.sync).
__device__ __forceinline__ void cake_tcgen05_fence_before() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}

__device__ __forceinline__ void cake_tcgen05_fence_after() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

// ---------------------------------------------------------------- MMA (one thread issues)

// D[tmem] (+)= A[smem] * B[smem]^T; `accumulate` = 0 overwrites D.
#define CAKE_DEFINE_TCGEN05_MMA(KIND)                                                        \
  __device__ __forceinline__ void cake_tcgen05_mma_##KIND(u32 d, u64 a, u64 b, u32 idesc,     \
                                                          u32 accumulate) {                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"                                 \
                 "tcgen05.mma.cta_group::1.kind::" #KIND " [%0], %1, %2, %3, p;\n}\n"        \
                 ::"r"(d), "l"(a), "l"(b), "r"(idesc), "r"(accumulate) : "memory");          \
  }
CAKE_DEFINE_TCGEN05_MMA(f16)
CAKE_DEFINE_TCGEN05_MMA(tf32)
CAKE_DEFINE_TCGEN05_MMA(f8f6f4)
CAKE_DEFINE_TCGEN05_MMA(i8)  // s8 x s8 -> s32 (sm_100a, not sm_103a)
#undef CAKE_DEFINE_TCGEN05_MMA

// One arrival on the mbarrier once every tcgen05 operation this thread issued has completed.
__device__ __forceinline__ void cake_tcgen05_commit(u32 bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];"
               ::"r"(bar) : "memory");
}

// ---------------------------------------------------------------- TMEM -> registers -> global

// tcgen05.ld 32x32b.x32: lane l of the warp reads TMEM lane (taddr's lane + l), 32 columns.
__device__ __forceinline__ void cake_tmem_ld_32x32b_x32(u32 taddr, u32 (&v)[32]) {
  asm volatile(
      "tcgen05.ld.sync.aligned.32x32b.x32.b32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, "
      "%11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "
      "%28, %29, %30, %31}, [%32];"
      : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]),
        "=r"(v[7]), "=r"(v[8]), "=r"(v[9]), "=r"(v[10]), "=r"(v[11]), "=r"(v[12]), "=r"(v[13]),
        "=r"(v[14]), "=r"(v[15]), "=r"(v[16]), "=r"(v[17]), "=r"(v[18]), "=r"(v[19]),
        "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]), "=r"(v[24]), "=r"(v[25]),
        "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]), "=r"(v[30]), "=r"(v[31])
      : "r"(taddr)
      : "memory");
}

__device__ __forceinline__ void cake_tmem_wait_ld() {
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

// One thread's accumulator row: TMEM columns [0, N) at `taddr` (this warp's lane quarter,
// lane = row) converted by `Out` into row `row`, columns [col0, col0 + N) of the row-major
// rank-2 tensor `t`. Every lane runs every tcgen05.ld (they are warp-collective); only the
// stores are bounds-checked, so tiles may hang over any edge of `t`.
// A TMEM cell's 32 bits as the accumulator's element type (f32, or s32 of kind::i8).
template <class T>
__device__ __forceinline__ T cake_tmem_cell(u32 v);
template <>
__device__ __forceinline__ float cake_tmem_cell<float>(u32 v) { return __uint_as_float(v); }
template <>
__device__ __forceinline__ i32 cake_tmem_cell<i32>(u32 v) { return (i32)v; }

template <int N, class Out, class T>
__device__ __forceinline__ void cake_store_tmem_row(u32 taddr, const CakeTensor<2>& t, i32 row,
                                                    i32 col0) {
  typedef typename Out::elem E;
  const long long rows = t.shape[0], cols = t.shape[1], ld = t.stride[0];
  const bool live = row < rows;
  E* const p = (E*)t.ptr + (live ? row * ld + col0 : 0);
  const bool pairs = Out::pairs_ok(t.ptr, ld);
#pragma unroll 1
  for (int c = 0; c < N; c += 32) {
    u32 v[32];
    cake_tmem_ld_32x32b_x32(taddr + (u32)c, v);
    cake_tmem_wait_ld();
    if (!live) continue;
    if (pairs && col0 + c + 32 <= cols) {
#pragma unroll
      for (int j = 0; j < 32; j += 2) Out::pair(p + c + j, cake_tmem_cell<T>(v[j]), cake_tmem_cell<T>(v[j + 1]));
    } else {
#pragma unroll
      for (int j = 0; j < 32; ++j)
        if (col0 + c + j < cols) Out::one(p + c + j, cake_tmem_cell<T>(v[j]));
    }
  }
}

#endif  // CAKE_EMIT_SM100_CUH
