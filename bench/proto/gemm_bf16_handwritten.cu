// gemm_bf16: C[M, N] = A[M, K] . B[N, K]^T, bf16 operands, f32 accumulation, bf16 result.
//
// Hand-written model of what the emitter generates for the LANGUAGE.md gemm_bf16 sketch on
// sm_90a. Like generated code it has no #include: targets/emit/prelude.cuh is prepended (by the
// emitter, here by run_proto.py), and the kernel uses only prelude helpers plus scalar C++.
//
// Schedule (the .cake entities are named in the comments):
//   lm.grid(...)                         persistent: as many CTAs as can be resident (whole
//                                        clusters), grouped tile order for L2 reuse
//   lm.cluster(CAKE_CLUSTER)             CTA pair on neighbouring M tiles: each CTA loads
//                                        half of the shared B tile, multicast to both
//   role `load` = warps 0-3, regs=40     one elected thread issues TMA for A and B
//   role `math` = warps 4-11, regs=232   two warpgroups split the 128x256 tile along M:
//                                        each does 4 x wgmma m64n256k16 per 64-deep K stage
//   pipe = lm.pipeline(stages=STAGES)    full[s] (1 arrival + tx bytes), empty[s] (one
//                                        arrival per math warpgroup per CTA of the cluster,
//                                        once its wgmma group reading stage s retired)
//   epilogue                             acc.to(bf16) stored straight to global; full tiles
//                                        keep the packed bf16 in registers and store them
//                                        under the next tile's first 4 K stages (CAKE_DEFER_STORE)
//
// Tuning knobs the emitter bakes in as constants; -D overrides let run_proto.py time variants.
// Defaults = the fastest configuration measured on the H200 (table in run_proto.py).
#ifndef CAKE_STAGES
#define CAKE_STAGES 4
#endif
#ifndef CAKE_GROUP_M
#define CAKE_GROUP_M 16
#endif
#ifndef CAKE_CLUSTER  // 1 or 2 CTAs per cluster
#define CAKE_CLUSTER 2
#endif
#ifndef CAKE_DEFER_STORE
#define CAKE_DEFER_STORE 1
#endif

// Grouped tile order: `group` M-units share each sweep along N, so the CTAs running at one
// moment read a compact block of A rows and B rows (L2 hits instead of HBM re-reads).
__device__ __forceinline__ void cake_tile_coords(int t, int tiles_m, int tiles_n, int group_m,
                                                 int& m_tile, int& n_tile) {
  const int per_group = group_m * tiles_n;
  const int group = t / per_group;
  const int first_m = group * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int r = t - group * per_group;
  m_tile = first_m + r % rows;
  n_tile = r / rows;
}

// Full-tile fast path, column blocks [8q, 8q + 8): two rows (p, p + 8 ld) of bf16 pairs.
__device__ __forceinline__ void cake_store_quarter(int q, u16* p, long long ld,
                                                   const u32 (&out)[64]) {
#pragma unroll
  for (int Q = 0; Q < 4; ++Q) {
    if (Q == q) {
#pragma unroll
      for (int j = 8 * Q; j < 8 * Q + 8; ++j) {
        *(u32*)(p + 8 * j) = out[2 * j];
        *(u32*)(p + 8 * ld + 8 * j) = out[2 * j + 1];
      }
    }
  }
}

extern "C" __global__ void __launch_bounds__(384, 1)
#if CAKE_CLUSTER > 1
__cluster_dims__(CAKE_CLUSTER, 1, 1)
#endif
gemm_bf16(const __grid_constant__ CakeTensorMap A_tmap0, const CakeTensor<2> A,
          const __grid_constant__ CakeTensorMap B_tmap0, const CakeTensor<2> B,
          const CakeTensor<2> C, const i32 M, const i32 N, const i32 K) {
  // pool = lm.smem(...): sa = pool.view(offset=0, shape=(128, 64), bf16, stage=STAGES, 128b)
  //                      sb = pool.view(offset=STAGES * 16K, shape=(256, 64), bf16, stage=STAGES, 128b)
  // followed by compiler scratch: full[STAGES], empty[STAGES] mbarriers (8 B each). Host side:
  // dynamic_smem = 1024 (alignment slack) + POOL_BYTES + 16 * STAGES.
  constexpr u32 STAGES = CAKE_STAGES, CLUSTER = CAKE_CLUSTER;
  constexpr int BM = 128, BN = 256, BK = 64;
  constexpr u32 SA_BYTES = BM * BK * 2;                       // 16 KiB per stage
  constexpr u32 SB_BYTES = BN * BK * 2;                       // 32 KiB per stage
  constexpr u32 POOL_BYTES = STAGES * (SA_BYTES + SB_BYTES);
  // K-major operand tile with 128-B rows under 128B swizzle: 8-row atoms 1024 B apart (SBO),
  // LBO unused (16 by convention); a k16 step inside the atom adds 32 B = 2 encoded units.
  // (BK = 32 with 64B swizzle and 8 stages measured 2-20% slower on the H200.)
  constexpr u32 SW128 = 1, LBO = 16, SBO = 1024;

  extern __shared__ __align__(1024) unsigned char cake_smem[];
  // 128B-swizzled tiles must start on the 1024-B pattern repeat (descriptor base_offset 0).
  const u32 pool = (cake_smem_addr(cake_smem) + 1023u) & ~1023u;
  const u32 sa = pool;                                        // sa[s] = sa + s * SA_BYTES
  const u32 sb = pool + STAGES * SA_BYTES;                    // sb[s] = sb + s * SB_BYTES
  const u32 full = pool + POOL_BYTES;                         // full[s] = full + 8 s
  const u32 empty = full + 8 * STAGES;                        // empty[s] = empty + 8 s

  // A cluster works on CLUSTER vertically adjacent tiles sharing one N tile (a "unit").
  const u32 rank = CLUSTER > 1 ? cake_cluster_ctarank() : 0;
  const int tiles_m = (M + BM - 1) / BM;
  const int tiles_n = (N + BN - 1) / BN;
  const int units_m = (tiles_m + CLUSTER - 1) / CLUSTER;
  const int units = units_m * tiles_n;
  const int unit_first = blockIdx.x / CLUSTER, unit_step = gridDim.x / CLUSTER;
  constexpr int GROUP = CAKE_GROUP_M / CLUSTER > 0 ? CAKE_GROUP_M / CLUSTER : 1;
  const int k_tiles = (K + BK - 1) / BK;                      // TMA zero-fills the K tail
  const u32 warp = cake_warp_id();

  if (threadIdx.x == 0) {
    for (u32 s = 0; s < STAGES; ++s) {
      cake_mbar_init(full + 8 * s, 1);                        // full: init_count=1 (+ tx bytes)
      cake_mbar_init(empty + 8 * s, 2 * CLUSTER);             // empty: per math WG per CTA
    }
    cake_fence_mbar_init();
  }
  if (CLUSTER > 1)
    cake_cluster_sync();  // the peer's multicasts and arrivals target our barriers
  else
    cake_named_barrier_sync(0, 384);

  if (warp < 4) {
    // ---- with load: (warps 0-3)
    cake_setmaxnreg_dec<40>();
    if (warp == 0 && cake_elect_one()) {
      cake_tma_prefetch(&A_tmap0);
      cake_tma_prefetch(&B_tmap0);
      u32 empty_phase = (1u << STAGES) - 1;                   // first lap of `empty` passes
      u32 stage = 0;
      for (int u = unit_first; u < units; u += unit_step) {
        int m_unit, n_tile;
        cake_tile_coords(u, units_m, tiles_n, GROUP, m_unit, n_tile);
        const int m_tile = m_unit * CLUSTER + rank;
        for (int k = 0; k < k_tiles; ++k) {
          // lm.wait(empty, stage=k % STAGES)
          cake_mbar_wait(empty + 8 * stage, (empty_phase >> stage) & 1u);
          empty_phase ^= 1u << stage;
          // sa.tma_load(A, coords=(m_tile, k), ...); sb.tma_load(B, coords=(n_tile, k), ...)
          cake_mbar_arrive_expect_tx(full + 8 * stage, SA_BYTES + SB_BYTES);
          cake_tma_load_2d(sa + stage * SA_BYTES, &A_tmap0, full + 8 * stage, k * BK, m_tile * BM);
          if (CLUSTER == 1) {
            cake_tma_load_2d(sb + stage * SB_BYTES, &B_tmap0, full + 8 * stage, k * BK,
                             n_tile * BN);
          } else {  // my slice of B lands in every CTA of the cluster
            cake_tma_load_2d_multicast(sb + stage * SB_BYTES + rank * (SB_BYTES / CLUSTER),
                                       &B_tmap0, full + 8 * stage, (1u << CLUSTER) - 1, k * BK,
                                       n_tile * BN + rank * (BN / CLUSTER));
          }
          stage = stage + 1 == STAGES ? 0 : stage + 1;
        }
      }
    }
  } else {
    // ---- with math: (warps 4-11); warpgroup `wg` owns rows [64 wg, 64 wg + 64) of the tile
    cake_setmaxnreg_inc<232>();
    const u32 wg = warp / 4 - 1;
    const u32 lane = cake_lane_id();
    const bool leader = (warp & 3) == 0 && lane == 0;        // one arrival per warpgroup
    const long long ld = C.stride[0];
    u16* const c = (u16*)C.ptr;
    // Column pairs go out as one 32-bit store when rows keep 4-B alignment.
    const bool pairs = (ld & 1) == 0 && ((u64)C.ptr & 3) == 0;
    float acc[BN / 2];                                        // acc = lm.regs((128, 256), f32)
#if CAKE_DEFER_STORE
    u32 out[BN / 4];                                          // previous tile, packed bf16
    u16* out_p = c;
    bool pending = false;
#endif
    u32 full_phase = 0;                                       // full waits start at parity 0
    u32 stage = 0;
    // lm.commit(empty, stage=s): release stage s in every CTA whose producer may refill it.
    auto release = [&](u32 s) {
      if (!leader) return;
      if (CLUSTER == 1) {
        cake_mbar_arrive(empty + 8 * s);
      } else {
#pragma unroll
        for (u32 r = 0; r < CLUSTER; ++r) cake_mbar_arrive_cluster(cake_mapa(empty + 8 * s, r));
      }
    };
    for (int u = unit_first; u < units; u += unit_step) {
      int m_unit, n_tile;
      cake_tile_coords(u, units_m, tiles_n, GROUP, m_unit, n_tile);
      const int m_tile = m_unit * CLUSTER + rank;
      u32 prev = 0;                                           // stage whose wgmma may still run
      for (int k = 0; k < k_tiles; ++k) {
        // lm.wait(full, stage=k % STAGES)
        cake_mbar_wait(full + 8 * stage, (full_phase >> stage) & 1u);
        full_phase ^= 1u << stage;
        // lm.mma(acc, sa[s], sb[s], init=(k == 0)): 4 x k16 steps along the 128-B swizzle row
        const u64 da = cake_wgmma_desc(sa + stage * SA_BYTES + wg * (64 * 128), LBO, SBO, SW128);
        const u64 db = cake_wgmma_desc(sb + stage * SB_BYTES, LBO, SBO, SW128);
        cake_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          cake_wgmma_m64n256k16_f32_bf16_bf16(acc, da + 2 * kk, db + 2 * kk, (k > 0) | (kk > 0));
        cake_wgmma_commit();
#if CAKE_DEFER_STORE
        if (pending && k < 4) cake_store_quarter(k, out_p, ld, out);  // under the wgmma
#endif
        // Keep one wgmma group in flight; the stage before it has been read: release it.
        cake_wgmma_wait<1>();
        if (k > 0) release(prev);
        prev = stage;
        stage = stage + 1 == STAGES ? 0 : stage + 1;
      }
      cake_wgmma_wait<0>();
      release(prev);
      cake_fence_regs(acc);

      // ---- epilogue: C[m, n] = acc.to(bf16). wgmma fragment: register i of thread (w, l)
      // holds row 16 w + l / 4 + 8 ((i >> 1) & 1), column 8 (i >> 2) + 2 (l % 4) + (i & 1).
      const int row = m_tile * BM + wg * 64 + (warp & 3) * 16 + lane / 4;
      const int col = n_tile * BN + 2 * (lane & 3);
      u16* const p0 = c + row * ld + col;
#if CAKE_DEFER_STORE
      if (pending)  // K shorter than 4 stages: finish the previous tile now
        for (int q = k_tiles; q < 4; ++q) cake_store_quarter(q, out_p, ld, out);
      pending = false;
#endif
      if (pairs && m_tile * BM + BM <= M && n_tile * BN + BN <= N) {
#if CAKE_DEFER_STORE
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          out[2 * j] = cake_pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
          out[2 * j + 1] = cake_pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
        }
        out_p = p0;
        pending = true;
#else
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
          *(u32*)(p0 + 8 * j) = cake_pack_bf16x2(acc[4 * j], acc[4 * j + 1]);
          *(u32*)(p0 + 8 * ld + 8 * j) = cake_pack_bf16x2(acc[4 * j + 2], acc[4 * j + 3]);
        }
#endif
      } else {  // tails and odd strides: element-wise bounds checks
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) {
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const int r = row + 8 * h, n = col + 8 * j;
            if (r < M) {
              u16* const p = c + r * ld + n;
              const float lo = acc[4 * j + 2 * h], hi = acc[4 * j + 2 * h + 1];
              if (pairs && n + 1 < N) {
                *(u32*)p = cake_pack_bf16x2(lo, hi);
              } else {
                if (n < N) p[0] = cake_f32_to_bf16(lo);
                if (n + 1 < N) p[1] = cake_f32_to_bf16(hi);
              }
            }
          }
        }
      }
    }
#if CAKE_DEFER_STORE
    if (pending)
      for (int q = 0; q < 4; ++q) cake_store_quarter(q, out_p, ld, out);
#endif
  }
  // Remote arrivals from the peer may still target our barriers until it is done too.
  if (CLUSTER > 1) cake_cluster_sync();
}
