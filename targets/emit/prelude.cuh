// Cake device prelude: the helpers every generated translation unit starts with.
//
// NVRTC sees no CUDA headers here, so everything is built from builtins and inline PTX.
// Shared-memory operands are 32-bit shared-window addresses (what cake_smem_addr returns);
// tensor maps are passed by pointer to the __grid_constant__ kernel parameter.
// Each helper names the PTX instruction it emits. Requires sm_90+ (wgmma/setmaxnreg: sm_90a).
#ifndef CAKE_PRELUDE_CUH
#define CAKE_PRELUDE_CUH

typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
typedef long long i64;

// CUtensorMap's layout: 128 opaque bytes, 128-B aligned; filled by cuTensorMapEncodeTiled on the host.
struct alignas(128) CakeTensorMap { u64 opaque[16]; };

// A tensor argument by value: numpy order (outermost first), strides in elements.
template <int R> struct CakeTensor {
  void* ptr;
  long long shape[R];
  long long stride[R];
};

// ---------------------------------------------------------------- addresses, lanes, warps

// cvta.to.shared: generic pointer -> 32-bit shared-window address.
__device__ __forceinline__ u32 cake_smem_addr(const void* p) {
  return (u32)__cvta_generic_to_shared(p);
}

// %laneid
__device__ __forceinline__ u32 cake_lane_id() {
  u32 l;
  asm("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}

// shfl.sync.idx: threadIdx.x / 32 made provably warp-uniform, so role branches do not diverge.
__device__ __forceinline__ u32 cake_warp_id() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
}

// Warpgroup (4 consecutive warps) index, warp-uniform.
__device__ __forceinline__ u32 cake_warpgroup_id() { return cake_warp_id() / 4; }

// elect.sync: true in exactly one active lane of the warp.
__device__ __forceinline__ bool cake_elect_one() {
  u32 pred;
  asm volatile(
      "{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}

// ---------------------------------------------------------------- barriers and fences

// bar.sync id, threads: named barrier over `threads` threads (a multiple of 32).
__device__ __forceinline__ void cake_named_barrier_sync(u32 id, u32 threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// bar.arrive id, threads: signal a named barrier without waiting.
__device__ __forceinline__ void cake_named_barrier_arrive(u32 id, u32 threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// fence.proxy.async.shared::cta: generic-proxy smem writes become visible to TMA/wgmma reads.
__device__ __forceinline__ void cake_fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// mbarrier.init.shared::cta.b64: `count` arrivals complete a phase.
__device__ __forceinline__ void cake_mbar_init(u32 bar, u32 count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// fence.mbarrier_init.release.cluster: publish mbarrier.init to the async proxy (TMA).
__device__ __forceinline__ void cake_fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.shared::cta.b64 (release.cta): one arrival.
__device__ __forceinline__ void cake_mbar_arrive(u32 bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64: one arrival plus `bytes` of expected transactions.
__device__ __forceinline__ void cake_mbar_arrive_expect_tx(u32 bar, u32 bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64: one probe; true once the phase of `parity` completed.
__device__ __forceinline__ bool cake_mbar_try_wait(u32 bar, u32 parity) {
  u32 done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// mbarrier.try_wait.parity spin loop: block until the phase of `parity` completed.
__device__ __forceinline__ void cake_mbar_wait(u32 bar, u32 parity) {
  asm volatile(
      "{\n.reg .pred p;\nCAKE_WAIT:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "@!p bra CAKE_WAIT;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// lm.skip: the phase bits flipped by passing over n consecutive positions of a ring of S
// mbarriers from stage s: bit j is set when stage j is passed an odd number of times.
template <typename T>
__device__ __forceinline__ T cake_ring_mask(u32 s, u32 n, u32 S) {
  const T all = S == 8u * sizeof(T) ? ~T(0) : ((T(1) << S) - T(1));
  const u32 r = n % S;
  T m = r == 0u ? T(0) : ((T(1) << r) - T(1));
  m = ((m << s) | (s == 0u ? T(0) : (m >> (S - s)))) & all;
  return ((n / S) & 1u) ? (m ^ all) : m;
}

// ---------------------------------------------------------------- clusters

// %cluster_ctarank: this CTA's rank inside its cluster.
__device__ __forceinline__ u32 cake_cluster_ctarank() {
  u32 r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

// barrier.cluster.arrive.release + barrier.cluster.wait.acquire: every thread of every CTA
// in the cluster meets here (before remote mbarrier use, and before exit).
__device__ __forceinline__ void cake_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

// mapa.shared::cluster.u32: the same shared address in the CTA of cluster rank `rank`.
__device__ __forceinline__ u32 cake_mapa(u32 addr, u32 rank) {
  u32 r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}

// mbarrier.arrive.shared::cluster.b64 (release.cta): one arrival on a (possibly remote)
// mbarrier given by a cake_mapa address. The .cluster-scope release form is not needed to
// hand a consumed stage back, and in the GEMM prototype it cost ~30% throughput.
__device__ __forceinline__ void cake_mbar_arrive_cluster(u32 cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}

// ---------------------------------------------------------------- TMA (cp.async.bulk.tensor)
// Loads: coordinates are element indices, innermost first; out-of-bounds elements are filled
// per the map and still count towards the barrier's transaction bytes.

// prefetch.tensormap: pull the descriptor into the cache ahead of the first copy.
__device__ __forceinline__ void cake_tma_prefetch(const CakeTensorMap* tmap) {
  asm volatile("prefetch.tensormap [%0];" ::"l"((u64)tmap) : "memory");
}

// cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ __forceinline__ void cake_tma_load_1d(u32 dst, const CakeTensorMap* tmap, u32 bar,
                                                 i32 c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3}], [%2];" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "r"(c0)
      : "memory");
}

// cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ __forceinline__ void cake_tma_load_2d(u32 dst, const CakeTensorMap* tmap, u32 bar,
                                                 i32 c0, i32 c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}

// cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ __forceinline__ void cake_tma_load_3d(u32 dst, const CakeTensorMap* tmap, u32 bar,
                                                 i32 c0, i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ __forceinline__ void cake_tma_load_4d(u32 dst, const CakeTensorMap* tmap, u32 bar,
                                                 i32 c0, i32 c1, i32 c2, i32 c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6}], [%2];" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

// cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes
__device__ __forceinline__ void cake_tma_load_5d(u32 dst, const CakeTensorMap* tmap, u32 bar,
                                                 i32 c0, i32 c1, i32 c2, i32 c3, i32 c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4, %5, %6, %7}], [%2];" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// cp.async.bulk.tensor.Nd...multicast::cluster: the box lands at `dst` and completes tx on
// `bar` (the same offsets) in every CTA of the cluster whose bit is set in `cta_mask`.
__device__ __forceinline__ void cake_tma_load_1d_multicast(u32 dst, const CakeTensorMap* tmap,
    u32 bar, u16 cta_mask, i32 c0) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4}], [%2], %3;" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "h"(cta_mask), "r"(c0)
      : "memory");
}

__device__ __forceinline__ void cake_tma_load_2d_multicast(u32 dst, const CakeTensorMap* tmap,
    u32 bar, u16 cta_mask, i32 c0, i32 c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5}], [%2], %3;" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1)
      : "memory");
}

__device__ __forceinline__ void cake_tma_load_3d_multicast(u32 dst, const CakeTensorMap* tmap,
    u32 bar, u16 cta_mask, i32 c0, i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5, %6}], [%2], %3;" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

__device__ __forceinline__ void cake_tma_load_4d_multicast(u32 dst, const CakeTensorMap* tmap,
    u32 bar, u16 cta_mask, i32 c0, i32 c1, i32 c2, i32 c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5, %6, %7}], [%2], %3;" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
}

__device__ __forceinline__ void cake_tma_load_5d_multicast(u32 dst, const CakeTensorMap* tmap,
    u32 bar, u16 cta_mask, i32 c0, i32 c1, i32 c2, i32 c3, i32 c4) {
  asm volatile(
      "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%4, %5, %6, %7, %8}], [%2], %3;" ::"r"(dst),
      "l"((u64)tmap), "r"(bar), "h"(cta_mask), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
      : "memory");
}

// The rank of the first member of this CTA's multicast group along the axes in `axes` (bit
// a = axis a): this CTA's rank with its coordinates along those axes set to 0.
__device__ __forceinline__ u32 cake_cluster_group_base(u32 axes) {
  u32 x, y, z, nx, ny;
  asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(x));
  asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(y));
  asm("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(z));
  asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(nx));
  asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(ny));
  if (axes & 1u) x = 0u;
  if (axes & 2u) y = 0u;
  if (axes & 4u) z = 0u;
  return x + nx * (y + ny * z);
}

// cp.async.bulk.tensor.2d.global.shared::cta.bulk_group: smem tile -> global (OOB parts dropped).
__device__ __forceinline__ void cake_tma_store_2d(const CakeTensorMap* tmap, u32 src, i32 c0,
                                                  i32 c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                   (u64)tmap),
               "r"(src), "r"(c0), "r"(c1)
               : "memory");
}

// cp.async.bulk.tensor.3d.global.shared::cta.bulk_group
__device__ __forceinline__ void cake_tma_store_3d(const CakeTensorMap* tmap, u32 src, i32 c0,
                                                  i32 c1, i32 c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];" ::"l"(
          (u64)tmap),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}

// cp.async.bulk.commit_group: close the group of TMA stores issued so far.
__device__ __forceinline__ void cake_tma_store_commit() {
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// cp.async.bulk.wait_group.read N: at most N store groups still read their smem source.
template <int N>
__device__ __forceinline__ void cake_tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

// cp.async.bulk.wait_group N: at most N store groups still incomplete (writes visible).
template <int N>
__device__ __forceinline__ void cake_tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// ---------------------------------------------------------------- registers

// setmaxnreg.inc.sync.aligned.u32: raise this warpgroup's register budget (blocks until free).
template <int N>
__device__ __forceinline__ void cake_setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
}

// setmaxnreg.dec.sync.aligned.u32: hand registers of this warpgroup back to the SM.
template <int N>
__device__ __forceinline__ void cake_setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
}

// Empty asm that "rewrites" every accumulator register: pins reads and writes of async-MMA
// results between the wgmma fence/wait instructions (the compiler cannot move them across).
template <int R>
__device__ __forceinline__ void cake_fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int R>
__device__ __forceinline__ void cake_fence_regs(i32 (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

// ---------------------------------------------------------------- bf16 / f16 conversions

// cvt.rn.bf16x2.f32: two floats -> packed bf16 pair, `lo` in the low half (lower address).
__device__ __forceinline__ u32 cake_pack_bf16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// cvt.rn.f16x2.f32: two floats -> packed f16 pair, `lo` in the low half.
__device__ __forceinline__ u32 cake_pack_f16x2(float lo, float hi) {
  u32 r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// cvt.rn.bf16.f32: float -> bf16 bits.
__device__ __forceinline__ u16 cake_f32_to_bf16(float x) {
  u16 r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
  return r;
}

// mov.b32 (shift): bf16 bits -> float, exact.
__device__ __forceinline__ float cake_bf16_to_f32(u16 x) { return __uint_as_float((u32)x << 16); }

// ---------------------------------------------------------------- wgmma (sm_90a)

// sm_90 shared-memory matrix descriptor; the same bits as targets/descriptors.py
// wgmma_smem_desc: addr>>4 in 0-13, LBO>>4 in 16-29, SBO>>4 in 32-45, swizzle in 62-63
// (0 none, 1 128B, 2 64B, 3 32B). Tiles are pattern-aligned, so base_offset stays 0.
__device__ __forceinline__ u64 cake_wgmma_desc(u32 smem_addr, u32 lbo_bytes, u32 sbo_bytes,
                                               u32 swizzle) {
  return (u64)((smem_addr & 0x3FFFF) >> 4) | ((u64)((lbo_bytes >> 4) & 0x3FFF) << 16) |
         ((u64)((sbo_bytes >> 4) & 0x3FFF) << 32) | ((u64)(swizzle & 3) << 62);
}

// wgmma.fence.sync.aligned: order register/smem accesses before the next wgmma.mma_async.
__device__ __forceinline__ void cake_wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}

// wgmma.commit_group.sync.aligned: close the group of wgmma.mma_async issued so far.
__device__ __forceinline__ void cake_wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// wgmma.wait_group.sync.aligned N: at most N wgmma groups of this warpgroup still pending.
template <int N>
__device__ __forceinline__ void cake_wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

// The wgmma.mma_async helpers themselves are generated per form (targets/sm90/wgmma_forms.py).

#endif  // CAKE_PRELUDE_CUH
