# sm_90a: which register layout a role's tiles take. A role with no MMA whose tiles are all 1
# or a multiple of 16 columns wide takes the quad layout (lane l holds columns
# 16 j + 4 (l % 4) + e of each 16: an f32 block moves as 16-byte loads and stores, and an f32
# (1, N) vector is read column by column in it); any other role keeps the wgmma columns
# 8 j + 2 (l % 4) + e and its pairs.
# RUN: cakec verify %s
# RUN: cakec emit %s --kernel quads --emit cuda | filecheck --check-prefix=QUAD %s
# RUN: cakec emit %s --kernel narrow --emit cuda | filecheck --check-prefix=PAIR %s
@cake.schedule(target="sm_90a")
def quads(lm, X: LM.tensor2d, B: LM.tensor2d, Y: LM.tensor2d):
    lm.grid(4)
    i = lm.block_id(0)
    work = lm.role(warps=[0, 1, 2, 3])
    with work:
        b = B.load(coords=(i, 0), shape=(1, 16), dtype=lm.f32)
        Y.store(X.load(coords=(i, 0), shape=(128, 16), dtype=lm.f32) + b, coords=(i, 0))
# A vector decides its bounds once: a run inside the tensor is read by plain loads (all issued
# before the first use), any other element by element with bounds.
# QUAD: float b[4];  // (1, 16): this thread's columns
# QUAD: const CakeBlock cake_vb = cake_run_block<2>(B, cake_at, 16);
# QUAD-NEXT: if (cake_vb.whole) {
# QUAD: b[cake_c] = cake_whole_run_elem<2, CakeInF32>(B, cake_vb, (16 * (cake_c / 4) + 4 * (i32)(cake_lane_id() % 4u) + cake_c % 4));
# QUAD: else {
# QUAD: b[cake_c] = cake_load_run_elem<2, CakeInF32>(B, cake_at, (16 * (cake_c / 4) + 4 * (i32)(cake_lane_id() % 4u) + cake_c % 4), (float)0.0f);
# QUAD: const CakeBlock cake_b = cake_block<2, float, 4>(Y, cake_at, 128, 16);
# QUAD: float cake_x[4];
# QUAD: cake_whole_store_run<2, CakeOutF32, 4>(Y, cake_b,
# QUAD: cake_block_store_pair<2, CakeOutF32>(Y, cake_b,


@cake.schedule(target="sm_90a")
def narrow(lm, X: LM.tensor2d, Y: LM.tensor2d):
    lm.grid(4)
    i = lm.block_id(0)
    work = lm.role(warps=[0, 1, 2, 3])
    with work:
        Y.store(X.load(coords=(i, 0), shape=(128, 24), dtype=lm.f32) * 2.0, coords=(i, 0))
# 24 columns are not whole 16-column groups: the wgmma columns, pair by pair.
# PAIR: const CakeBlock cake_b = cake_block<2, float, 2>(Y, cake_at, 128, 24);
# PAIR: cake_whole_store_pair<2, CakeOutF32>(Y, cake_b, {{.*}}, (8 * (cake_c / 2) + 2 * (i32)(cake_lane_id() % 4u) + cake_c % 2), cake_x[0], cake_x[1]);
# PAIR-NOT: cake_whole_store_run
