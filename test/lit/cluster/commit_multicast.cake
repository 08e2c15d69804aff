# A stage that a wgmma reads, filled by a multicast copy, released to both CTAs of the pair
# once the MMA reading it completed: `lm.commit(empty, stage=s, multicast=0)`. Each CTA's two
# warpgroups commit to both CTAs' `empty[s]` (2 warpgroups × 2 CTAs = 4 arrivals per phase,
# derived); the ring loop holds the newest wgmma group in flight and releases the stage
# before it, through mapa, lane m of each warpgroup's first warp arriving on member m.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: not cakec verify --target sm_100a %s 2>&1 | filecheck --strict-whitespace --check-prefix=SM100 %s
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def k(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    lm.grid(4)
    pool = lm.smem(98304)
    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=65536, shape=(64, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    load = lm.role(warps=[0, 1, 2, 3])
    math = lm.role(warps=[4, 5, 6, 7, 8, 9, 10, 11])
    pipe = lm.pipeline(stages=4)
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2, pipeline=pipe)
    empty = lm.barrier(count=4, prod=[math], cons=[load], pipeline=pipe)
    acc = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    with load:
        for kt in lm.range(0, k_tiles):
            lm.wait(empty, stage=kt % 4)
            sa.tma_load(A, coords=(lm.block_id(0), kt), stage=kt % 4, barrier=full)
            sb.tma_load(B, coords=(0, kt), stage=kt % 4, barrier=full, multicast=0)
    with math:
        for kt in lm.range(0, k_tiles):
            s = kt % 4
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(kt == 0))
            lm.commit(empty, stage=s, multicast=0)
        C.tma_store(acc.to(lm.bf16), coords=(lm.block_id(0), 0))
    lm.cluster_sync()
# CHECK: __launch_bounds__(384, 1) __cluster_dims__(2, 1, 1)
# CHECK: cake_mbar_init(full + 8u * i, 2);
# CHECK: cake_mbar_init(empty + 8u * i, 4);
# CHECK: cake_cluster_sync();
# CHECK: cake_tma_load_2d_multicast(
# CHECK-NOT: cake_wg_leader =
# CHECK: const bool cake_wg_leader_warp = cake_warp % 4u == 0u;
# CHECK: cake_wgmma_wait<1>();
# CHECK-NEXT: if (empty_held != ~0u) {
# CHECK-NEXT: if (cake_wg_leader_warp && cake_lane_id() < 2u) cake_mbar_arrive_cluster(cake_mapa(empty + 8u * empty_held, cake_cluster_group_base(1u) + cake_lane_id()));  // lane m: member m
# CHECK: cake_wgmma_wait<0>();
# CHECK-NEXT: if (empty_held != ~0u) {
# CHECK-NEXT: if (cake_wg_leader_warp && cake_lane_id() < 2u) cake_mbar_arrive_cluster(cake_mapa(empty + 8u * empty_held, cake_cluster_group_base(1u) + cake_lane_id()));  // lane m: member m
# CHECK: cake_cluster_sync();
# SM100: commit_multicast.cake:32:13: error: `lm.commit(..., multicast=)` (tcgen05.commit's multicast form) is not yet supported for sm_100a code generation [CAKE-H100]
# SM100-NEXT: {{^}}            lm.commit(empty, stage=s, multicast=0)
# SM100-NEXT: {{^}}            ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~{{$}}
