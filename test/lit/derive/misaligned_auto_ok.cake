# RUN: cakec verify %s
# RUN: cakec inspect %s | filecheck %s
# Near miss of misaligned_128b.cake: without a tag the compiler picks the widest swizzle
# the offset allows (64b, two 64-B column blocks) and says why.
@cake.schedule()
def k(lm, A: LM.tma2d):
    pool = lm.smem(66048)
    sa = pool.view(offset=512, shape=(128, 64), dtype=lm.bf16, stage=4)
    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[1])
    full = lm.barrier(count=4, prod=[load], cons=[mma], init_count=1)
    empty = lm.barrier(count=4, prod=[mma], cons=[load], init_count=1)
    with load:
        for k in lm.range(0, 8):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(0, k), stage=k % 4, barrier=full)
    with mma:
        for k in lm.range(0, 8):
            lm.wait(full, stage=k % 4)
            lm.mma(acc, sa[k % 4], sa[k % 4], init=(k == 0))
            lm.commit(empty, stage=k % 4)
# CHECK:      "views": [
# CHECK-NEXT:   {
# CHECK-NEXT:     "name": "sa",
# CHECK-NEXT:     "line": 8,
# CHECK-NEXT:     "offset": 512,
# CHECK-NEXT:     "stage_bytes": 16384,
# CHECK-NEXT:     "stages": 4,
# CHECK-NEXT:     "stage_offsets": [512, 16896, 33280, 49664],
# CHECK-NEXT:     "swizzle": "64b",
# CHECK-NEXT:     "swizzle_reason": "auto: 64b for the TMA load at line 17 and the MMA at line 21; 128b would need an offset aligned to 1024 B, not 512",
# CHECK-NEXT:     "align": 512,
# CHECK-NEXT:     "atoms": 2,
# CHECK-NEXT:     "atom_bytes": 8192
# CHECK:      "tma": [
# CHECK:          "box": [128, 32],
# CHECK-NEXT:     "copies": 2,
# CHECK-NEXT:     "tx_bytes": 16384,
# CHECK-NEXT:     "coords": ["k*64", "0"],
# CHECK-NEXT:     "tmap": 0,
# CHECK-NEXT:     "copy_coords": [
# CHECK-NEXT:       ["k*64", "0"],
# CHECK-NEXT:       ["k*64+32", "0"]
# CHECK-NEXT:     ]
# 64b: SBO = 8 rows x 64 B = 512; K steps of 32 B, the third one in the second column
# block (128 rows x 64 B = 8192 B further).
# CHECK:          "a_desc": {
# CHECK-NEXT:       "hex": "0x8000402000010000",
# CHECK:          "a_koffsets": [0, 32, 8192, 8224],
