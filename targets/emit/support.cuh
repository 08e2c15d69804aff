// Cake emitter support shared by every backend (targets/emit): what generated kernels need
// beyond targets/emit/prelude.cuh on any target. Appended after the prelude; no #include.
#ifndef CAKE_EMIT_SUPPORT_CUH
#define CAKE_EMIT_SUPPORT_CUH

// ---------------------------------------------------------------- scalar index arithmetic

// arith.floordivsi (`//` in .cake): division rounding towards negative infinity.
__device__ __forceinline__ i32 cake_floordiv(i32 a, i32 b) {
  const i32 q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// arith.ceildivsi (lm.cdiv): division rounding towards positive infinity.
__device__ __forceinline__ i32 cake_cdiv(i32 a, i32 b) {
  const i32 q = a / b;
  return (q * b != a && ((a < 0) == (b < 0))) ? q + 1 : q;
}

// ---------------------------------------------------------------- epilogue stores

// cvt.rn.f16.f32: float -> f16 bits.
__device__ __forceinline__ u16 cake_f32_to_f16(float x) {
  u16 r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}

// How a converted tile element is written: one element, or two adjacent ones in one store
// when the row pointer allows it (`pairs_ok`).
struct CakeOutBf16 {
  typedef u16 elem;
  static __device__ __forceinline__ bool pairs_ok(const void* p, long long ld) {
    return (ld & 1) == 0 && ((u64)p & 3) == 0;
  }
  static __device__ __forceinline__ u32 pack(float lo, float hi) { return cake_pack_bf16x2(lo, hi); }
  static __device__ __forceinline__ void pair(u16* p, float lo, float hi) { *(u32*)p = pack(lo, hi); }
  static __device__ __forceinline__ void one(u16* p, float v) { *p = cake_f32_to_bf16(v); }
  static __device__ __forceinline__ void sts_pair(u32 a, float lo, float hi) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(pack(lo, hi)) : "memory");
  }
  // Half h (0: the even column) of a packed register of a 16-bit register tile.
  static __device__ __forceinline__ float get(u32 w, int h) {
    return __uint_as_float(h ? (w & 0xffff0000u) : (w << 16));
  }
  static __device__ __forceinline__ void set(u32& w, int h, float x) {
    const u32 b = cake_f32_to_bf16(x);
    w = h ? ((w & 0xffffu) | (b << 16)) : ((w & 0xffff0000u) | b);
  }
};

struct CakeOutF16 {
  typedef u16 elem;
  static __device__ __forceinline__ bool pairs_ok(const void* p, long long ld) {
    return (ld & 1) == 0 && ((u64)p & 3) == 0;
  }
  static __device__ __forceinline__ u32 pack(float lo, float hi) { return cake_pack_f16x2(lo, hi); }
  static __device__ __forceinline__ void pair(u16* p, float lo, float hi) { *(u32*)p = pack(lo, hi); }
  static __device__ __forceinline__ void one(u16* p, float v) { *p = cake_f32_to_f16(v); }
  static __device__ __forceinline__ void sts_pair(u32 a, float lo, float hi) {
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(a), "r"(pack(lo, hi)) : "memory");
  }
  static __device__ __forceinline__ float get(u32 w, int h) {
    float y;
    asm("cvt.f32.f16 %0, %1;" : "=f"(y) : "h"((u16)(h ? w >> 16 : w & 0xffffu)));
    return y;
  }
  static __device__ __forceinline__ void set(u32& w, int h, float x) {
    const u32 b = cake_f32_to_f16(x);
    w = h ? ((w & 0xffffu) | (b << 16)) : ((w & 0xffff0000u) | b);
  }
};

struct CakeOutF32 {
  typedef float elem;
  static __device__ __forceinline__ bool pairs_ok(const void* p, long long ld) {
    return (ld & 1) == 0 && ((u64)p & 7) == 0;
  }
  static __device__ __forceinline__ void pair(float* p, float lo, float hi) {
    *(float2*)p = make_float2(lo, hi);
  }
  // st.global.v4.f32 (p is a global tensor's): NVRTC 13.0 splits a float4 store into four.
  static __device__ __forceinline__ void quad(float* p, const float (&x)[4]) {
    asm volatile("{\n.reg .u64 g;\ncvta.to.global.u64 g, %0;\n"
                 "st.global.v4.f32 [g], {%1, %2, %3, %4};\n}" ::"l"(p), "f"(x[0]), "f"(x[1]),
                 "f"(x[2]), "f"(x[3])
                 : "memory");
  }
  static __device__ __forceinline__ void one(float* p, float v) { *p = v; }
  static __device__ __forceinline__ void sts_pair(u32 a, float lo, float hi) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(lo), "f"(hi) : "memory");
  }
};

struct CakeOutI32 {
  typedef i32 elem;
  static __device__ __forceinline__ bool pairs_ok(const void* p, long long ld) {
    return (ld & 1) == 0 && ((u64)p & 7) == 0;
  }
  static __device__ __forceinline__ void pair(i32* p, i32 lo, i32 hi) { *(int2*)p = make_int2(lo, hi); }
  static __device__ __forceinline__ void quad(i32* p, const float (&x)[4]) {
    asm volatile("{\n.reg .u64 g;\ncvta.to.global.u64 g, %0;\n"
                 "st.global.v4.s32 [g], {%1, %2, %3, %4};\n}" ::"l"(p), "r"((i32)x[0]),
                 "r"((i32)x[1]), "r"((i32)x[2]), "r"((i32)x[3])
                 : "memory");
  }
  static __device__ __forceinline__ void one(i32* p, i32 v) { *p = v; }
};

#endif  // CAKE_EMIT_SUPPORT_CUH
