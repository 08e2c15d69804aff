# (M, N) block loads, (1, 1) scalar and bf16 vector loads, column reductions (axis=0) and
# (1, N) vector stores in a role with no MMA: verified and emitted for every family.
# RUN: cakec verify --target sm_90a %s
# RUN: cakec verify --target sm_100a %s
# RUN: cakec verify --target sm_80 %s
# RUN: cakec emit --target sm_90a %s --emit cuda | filecheck --check-prefix=SM90 %s
# RUN: cakec emit --target sm_100a %s --emit cuda | filecheck --check-prefix=SM100 %s
# RUN: cakec emit --target sm_80 %s --emit cuda | filecheck --check-prefix=SM80 %s
@cake.schedule(target="sm_90a")
def k(lm, X: LM.tensor2d, W: LM.tensor3d, A: LM.tensor1d, Y: LM.tensor2d, Z: LM.tensor2d):
    lm.grid(4)
    i = lm.block_id(0)
    work = lm.role(warps=[0, 1, 2, 3])
    s = lm.regs(shape=(128, 32), dtype=lm.f32, role=work)
    with work:
        s = 0.0
        s = X.load(coords=(i, 0), shape=(128, 32), dtype=lm.f32)
        w = W.load(coords=(i, 0, 1), shape=(128, 1), dtype=lm.bf16).to(lm.f32)
        a = A.load(coords=(i,), shape=(1, 1), dtype=lm.f32)
        col = (s * w).sum(axis=0)
        Y.store((a * col).to(lm.bf16), coords=(i, 0))
        Z.store(s * a + X.load(coords=(i, 0), shape=(128, 32), dtype=lm.f32), coords=(i, 0))
# The fill runs over the block's registers; the first load fills them four columns per load
# when the block is whole: a role with no MMA takes the quad layout on sm_90a (the wgmma rows,
# column slot c at 16 (c / 4) + 4 (l % 4) + c % 4), so each run is one 16-byte access.
# SM90: float s[2][16];  // (128, 32) lm.regs
# SM90: s[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] = 0.0f;
# SM90: const i32 block_at[2] = {i * 128, 0};  // (128, 32): read where it is used
# One bounds decision for the tile: a whole block is read by plain 16-byte loads, any other
# block pair by pair against the block's inside rectangle (cake_block_pair).
# SM90: const CakeBlock cake_pb = cake_block<2, float, 4>(X, block_at, 128, 32);
# SM90-NEXT: if (cake_pb.whole) {
# SM90: for (int cake_cp = 0; cake_cp < 8; cake_cp += 4) {
# SM90-NEXT: float cake_x[4];
# SM90-NEXT: { const int cake_c = cake_cp; cake_whole_run<2, CakeInF32, 4>(X, cake_pb, {{.*}}, (16 * (cake_c / 4) + 4 * (i32)(cake_lane_id() % 4u) + cake_c % 4), cake_x); }
# SM90: else {
# SM90: for (int cake_cp = 0; cake_cp < 8; cake_cp += 2) {
# SM90: cake_block_pair<2, CakeInF32>(X, cake_pb,
# SM90: float vec[2][2];  // (128, 1): this thread's rows
# SM90: vec[cake_r / 2][cake_r % 2] = cake_load_run_elem<3, CakeInBf16>(W, cake_at,
# SM90: float a;  // (1, 1): in every thread
# SM90-NEXT: {
# SM90-NEXT: const i32 cake_at[1] = {i};
# SM90-NEXT: a = cake_load_run_elem<1, CakeInF32>(A, cake_at, 0, (float)0.0f);
# A column: the thread's 4 rows, the 8 lanes sharing its columns, then the 4 warps in SMEM.
# SM90: cake_a = cake_a + cake_o;
# SM90: __shfl_xor_sync(0xffffffffu, cake_a, 4);
# SM90: __shfl_xor_sync(0xffffffffu, cake_a, 16);
# SM90: __shared__ float cake_colred_[4][32];  // per-warp column partials (512 B)
# SM90-NEXT: cake_named_barrier_sync(1u, 128u);
# SM90: if ((cake_lane_id() & 28u) == 0u) cake_colred_[(i32)(cake_warp - 0u)]
# SM90: cake_named_barrier_sync(1u, 128u);
# SM90: const bool cake_w = (cake_lane_id() & 28u) == 0u && (i32)(cake_warp - 0u) == 0;
# SM90: if (cake_w) cake_store_col<2, CakeOutBf16>(cake_x, Y, cake_at,
# The second load of X is read by the store that consumes it, element by element.
# The store and the load it reads decide together: both blocks whole, or the checked code.
# SM90: const i32 block_at_1[2] = {i * 128, 0};
# SM90-NEXT: const CakeBlock block_at_1_b = cake_block<2, float, 2>(X, block_at_1, 128, 32);
# SM90: const i32 cake_at[2] = {i * 128, 0};
# SM90-NEXT: const CakeBlock cake_b = cake_block<2, float, 4>(Z, cake_at, 128, 32);
# SM90-NEXT: if (cake_b.whole && block_at_1_b.whole) {
# SM90: cake_x[0] = fmaf((s[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2]), a, cake_whole_elem<2, CakeInF32>(X, block_at_1_b,
# SM90: cake_whole_store_run<2, CakeOutF32, 4>(Z, cake_b,
# SM90: else {
# The checked copy reads the load a pair at a time (paired_loads), one 8-byte access per pair.
# SM90: float cake_p_[2];
# SM90-NEXT: { const int cake_c = cake_cp; cake_block_pair<2, CakeInF32>(X, block_at_1_b,
# SM90-NEXT: { const int cake_c = cake_cp + 0; cake_x[0] = fmaf((s[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2]), a, cake_p_[cake_c - cake_cp]); }
# SM90: cake_block_store_pair<2, CakeOutF32>(Z, cake_b,
# sm_100a: one row per thread, every column; a column spans all 32 lanes and the 4 warps.
# Every family decides once per block (plain accesses inside): the load, then the store.
# SM100: float s[32];  // (128, 32) lm.regs
# SM100: if (cake_pb.whole) {
# SM100: cake_whole_pair<2, CakeInF32>(X, cake_pb, (i32)(32u * (cake_warp % 4u) + cake_lane_id()), cake_c, cake_x)
# SM100: __shfl_xor_sync(0xffffffffu, cake_a, 1);
# SM100: __shared__ float cake_colred_[4][32];
# SM100: cake_colred_[(i32)(cake_warp % 4u)]
# SM100: if (cake_b.whole && block_at_1_b.whole) {
# SM100: cake_whole_store_pair<2, CakeOutF32>(Z, cake_b,
# sm_80: mma.sync fragments, each warp 32 rows of the block.
# SM80: float s[2][4][4];  // (128, 32) lm.regs
# SM80: if (cake_pb.whole) {
# SM80: cake_whole_pair<2, CakeInF32>(X, cake_pb,
# SM80: __shared__ float cake_colred_[4][32];
# SM80: cake_colred_[(i32)((cake_warp - 0u) % 4u)]
# SM80: if (cake_b.whole && block_at_1_b.whole) {
# SM80: cake_whole_store_pair<2, CakeOutF32>(Z, cake_b,
