# Register-tile global I/O a column pair at a time (docs/codegen.md, "Block loads and
# stores"): a load assigned to a register tile through an expression is read where it is
# used, one access per column pair (4 bytes of bf16, 8 of f32) when the block is whole; a
# 16-bit register tile is packed a pair at a time (one convert); the checked copy decides
# bounds against the block's inside rectangle (rows x columns, computed once per block), so
# a ragged tile pays two compares per pair rather than a walk of every dimension per element.
# The CUDA builds (ptxas) for sm_90a.
# RUN: cakec verify %s
# RUN: cakec emit %s --emit cuda | filecheck %s
# RUN: cakec emit %s --emit cubin -o %t.cubin
@cake.schedule(target="sm_90a")
def k(lm, K: LM.tensor4d, G: LM.tensor4d, O: LM.tensor4d, T: LM.i32):
    lm.grid(lm.cdiv(T, 64))
    n = lm.block_id(0)
    work = lm.role(warps=[0, 1, 2, 3])
    kt = lm.regs(shape=(64, 128), dtype=lm.bf16, role=work)
    gl = lm.regs(shape=(64, 128), dtype=lm.f32, role=work)
    with work:
        kt = K.load(coords=(0, 0, n, 0), shape=(64, 128), dtype=lm.bf16)
        gl = G.load(coords=(0, 0, n, 0), shape=(64, 128), dtype=lm.f32) * 2.0
        O.store((kt.to(lm.f32) * gl).to(lm.bf16), coords=(0, 0, n, 0))
# The bf16 load: its block's bounds and pair alignment decided once, then one 4-byte read
# per pair, packed straight into the register.
# CHECK: const CakeBlock block_at_b = cake_block<4, u16, 2>(K, block_at, 64, 128);
# CHECK: if (block_at_b.whole) {
# CHECK: for (int cake_cp = 0; cake_cp < 32; cake_cp += 2) {
# CHECK-NEXT: float cake_x[2];
# CHECK-NEXT: float cake_p_[2];
# CHECK-NEXT: { const int cake_c = cake_cp; cake_whole_pair<4, CakeInBf16>(K, block_at_b,
# CHECK-NEXT: { const int cake_c = cake_cp + 0; cake_x[0] = cake_p_[cake_c - cake_cp]; }
# CHECK-NEXT: { const int cake_c = cake_cp + 1; cake_x[1] = cake_p_[cake_c - cake_cp]; }
# CHECK-NEXT: { const int cake_c = cake_cp; kt[cake_r / 2][2 * (cake_c / 2) + cake_r % 2] = CakeOutBf16::pack(cake_x[0], cake_x[1]); }
# CHECK: else {
# CHECK: { const int cake_c = cake_cp; cake_block_pair<4, CakeInBf16>(K, block_at_b,
# CHECK-SAME: (float)0.0f); }
# The f32 load under `* 2.0`: one 8-byte read per pair, each half scaled.
# CHECK: const CakeBlock block_at_1_b = cake_block<4, float, 2>(G, block_at_1, 64, 128);
# CHECK: if (block_at_1_b.whole) {
# CHECK: float cake_p_[2];
# CHECK-NEXT: { const int cake_c = cake_cp; cake_whole_pair<4, CakeInF32>(G, block_at_1_b,
# CHECK-NEXT: {
# CHECK-NEXT: const int cake_c = cake_cp + 0;
# CHECK-NEXT: gl[cake_r / 2][4 * (cake_c / 2) + 2 * (cake_r % 2) + cake_c % 2] = (cake_p_[cake_c - cake_cp] * 2.0f);
# CHECK: else {
# CHECK: cake_block_pair<4, CakeInF32>(G, block_at_1_b,
# The store: one block, whole or checked against its rectangle, a pair per access.
# CHECK: const CakeBlock cake_b = cake_block<4, u16, 2>(O, cake_at, 64, 128);
# CHECK: cake_whole_store_pair<4, CakeOutBf16>(O, cake_b,
# CHECK: cake_block_store_pair<4, CakeOutBf16>(O, cake_b,
# CHECK-NOT: cake_block_elem
