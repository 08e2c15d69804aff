# A 2-CTA cluster whose rank-0 CTA multicasts each stage of C into both CTAs: every CTA's
# `full[s]` expects the whole box, `empty[s]` takes both CTAs' releases (2 arrivals per
# phase, derived), the cluster syncs after mbarrier.init and before exit.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
@cake.schedule(target="sm_90a", cluster=(2, 1, 1))
def k(lm, C: LM.tma3d, O: LM.tensor2d):
    lm.grid(4)
    pool = lm.smem(65536)
    sc = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, stage=2, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4])
    pipe = lm.pipeline(stages=2)
    full = lm.barrier(count=2, prod=[load], cons=[math], pipeline=pipe)
    empty = lm.barrier(count=2, prod=[math], cons=[load], pipeline=pipe)
    with load:
        for kt in lm.range(0, 8):
            lm.wait(empty, stage=kt % 2)
            sc.tma_load(C, coords=(0, kt, 0), stage=kt % 2, barrier=full, multicast=0)
    with math:
        for kt in lm.range(0, 8):
            lm.wait(full, stage=kt % 2)
            lm.arrive(empty, stage=kt % 2, multicast=0)
    lm.cluster_sync()
# CHECK: __launch_bounds__(160, 1) __cluster_dims__(2, 1, 1)
# CHECK: cake_mbar_init(full + 8u * i, 1);
# CHECK: cake_mbar_init(empty + 8u * i, 2);
# CHECK: cake_fence_mbar_init();
# CHECK: cake_cluster_sync();
# CHECK: cake_mbar_arrive_expect_tx(full + 8u * (kt % 2), 32768u);
# CHECK-NEXT: if (cake_cluster_ctarank() == cake_cluster_group_base(1u)) {
# CHECK-NEXT: cake_tma_load_3d_multicast(sc + (u32)(kt % 2) * 32768u, &C_tmap0, full + 8u * (kt % 2), (u16)(0x3u << cake_cluster_group_base(1u)), 0, kt * 128, 0);
# CHECK: for (u32 cake_m = 0; cake_m < 2u; ++cake_m) {
# CHECK-NEXT: cake_mbar_arrive_cluster(cake_mapa(empty + 8u * (kt % 2), cake_cluster_group_base(1u) + cake_m));
# CHECK: // multicast_ok.cake:24: lm.cluster_sync()
# CHECK-NEXT: cake_cluster_sync();
