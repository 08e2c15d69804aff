"""derive-descriptors: the bits written into the IR equal the targets.descriptors encodings
of hand-derived layouts (PTX.md sections 6-7), for each MMA family, swizzle and dtype."""

from __future__ import annotations

import pytest

from cakec.driver import build, read_source, run_passes
from cakec.dialects.cake import MmaOp
from cakec.passes.derive_common import get_int, get_ints, get_str, get_u64
from cakec.targets.descriptors import (
    decode_fields, tcgen05_instr_desc, tcgen05_smem_desc, wgmma_smem_desc,
)


def gemm(*, target: str, a: tuple[int, int], b: tuple[int, int], acc: tuple[int, int],
         dtype: str = "bf16", swizzle: str = "", regs: bool = False,
         mma_warps: str = "[1]") -> str:
    """A two-view pipelined MMA kernel; `swizzle` is a tag such as `, swizzle=64b`."""
    acc_decl = (f"lm.regs(shape={acc}, dtype=lm.{'i32' if dtype == 'i8' else 'f32'}, role=mma)"
                if regs else
                f"lm.tmem(cols=0, width={acc[1]}, shape={acc}, dtype=lm.f32)")
    elem = {"bf16": 2, "f16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "i8": 1}[dtype]
    a_bytes, b_bytes = a[0] * a[1] * elem, b[0] * b[1] * elem
    b_off = -(-2 * a_bytes // 1024) * 1024
    return f"""@cake.schedule(target="{target}")
def g(lm, A: LM.tma2d, B: LM.tma2d):
    pool = lm.smem({b_off + 2 * b_bytes})
    sa = pool.view(offset=0, shape={a}, dtype=lm.{dtype}, stage=2{swizzle})
    sb = pool.view(offset={b_off}, shape={b}, dtype=lm.{dtype}, stage=2{swizzle})
    load = lm.role(warps=[0])
    mma = lm.role(warps={mma_warps})
    acc = {acc_decl}
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=1)
    with load:
        for k in lm.range(0, 2):
            sa.tma_load(A, coords=(0, k), stage=k, barrier=full)
            sb.tma_load(B, coords=(0, k), stage=k, barrier=full)
    with mma:
        for k in lm.range(0, 2):
            lm.wait(full, stage=k)
            lm.mma(acc, sa[k], sb[k], init=(k == 0))
"""


def derived_mma(source: str) -> MmaOp:
    comp = build(read_source("t.cake", source))
    assert comp.ok, [d.message for d in comp.sink.diagnostics]
    run_passes(comp, "derive-smem,derive-tmem,derive-tma,derive-descriptors")
    assert comp.ok, [d.message for d in comp.sink.diagnostics]
    return next(op for op in comp.module.walk() if isinstance(op, MmaOp))


# K-major SMEM descriptor layouts worked out by hand: swizzled rows hold one span of K, so
# 8-row atoms are 8*span apart (SBO) and LBO is the conventional 16; without swizzle,
# 8x16-B core matrices run down M/N (SBO 128) then along K (LBO = rows*16).
SW = {"128b": (16, 1024), "64b": (16, 512), "32b": (16, 256)}


@pytest.mark.parametrize("swizzle,k,expected_a", [
    ("128b", 64, 0x4000404000010000),
    ("64b", 32, 0x8000402000010000),
    ("32b", 16, 0xC000401000010000),
])
def test_tcgen05_smem_descriptors(swizzle: str, k: int, expected_a: int) -> None:
    mma = derived_mma(gemm(target="sm_100a", a=(128, k), b=(256, k), acc=(128, 256),
                           swizzle=f", swizzle={swizzle}"))
    lbo, sbo = SW[swizzle]
    assert get_u64(mma, "cake.a_desc") == expected_a
    assert get_u64(mma, "cake.a_desc") == tcgen05_smem_desc(0, swizzle=swizzle, lbo=lbo, sbo=sbo)
    assert get_u64(mma, "cake.b_desc") == tcgen05_smem_desc(0, swizzle=swizzle, lbo=lbo, sbo=sbo)
    fields = decode_fields("tcgen05_smem", get_u64(mma, "cake.a_desc"))
    assert (fields["addr"], fields["sbo"], fields["version"], fields["swizzle"]) == (
        0, sbo, 1, swizzle)


def test_tcgen05_no_swizzle_core_matrices() -> None:
    mma = derived_mma(gemm(target="sm_100a", a=(128, 64), b=(64, 64), acc=(128, 64),
                           swizzle=", swizzle=None"))
    assert get_u64(mma, "cake.a_desc") == tcgen05_smem_desc(0, swizzle="none", lbo=128 * 16,
                                                            sbo=128)
    assert get_u64(mma, "cake.b_desc") == tcgen05_smem_desc(0, swizzle="none", lbo=64 * 16,
                                                            sbo=128)
    # K step 16 bf16 = 32 B = two 16-B core-matrix columns, each LBO apart.
    assert get_ints(mma, "cake.a_koffsets") == [0, 2 * 2048, 4 * 2048, 6 * 2048]


@pytest.mark.parametrize("dtype,n,expected", [
    ("bf16", 256, 0x08400490),  # PTX.md worked examples
    ("bf16", 128, 0x08200490),
    ("f16", 64, (1 << 4) | (8 << 17) | (8 << 24)),
])
def test_tcgen05_instruction_descriptor(dtype: str, n: int, expected: int) -> None:
    mma = derived_mma(gemm(target="sm_100a", a=(128, 64), b=(n, 64), acc=(128, n),
                           dtype=dtype))
    assert get_int(mma, "cake.idesc") == expected
    assert get_int(mma, "cake.idesc") == tcgen05_instr_desc(a_dtype=dtype, b_dtype=dtype,
                                                            d_dtype="f32", m=128, n=n)
    assert get_str(mma, "cake.instr") == "tcgen05.mma.cta_group::1.kind::f16"
    assert get_ints(mma, "cake.mma_shape") == [128, n, 16]


def test_tcgen05_fp8_and_tf32_kinds() -> None:
    fp8 = derived_mma(gemm(target="sm_100a", a=(128, 128), b=(128, 128), acc=(128, 128),
                           dtype="e4m3"))
    assert get_str(fp8, "cake.instr") == "tcgen05.mma.cta_group::1.kind::f8f6f4"
    assert get_int(fp8, "cake.idesc") == tcgen05_instr_desc(a_dtype="e4m3", b_dtype="e4m3",
                                                            d_dtype="f32", m=128, n=128)
    assert get_ints(fp8, "cake.a_koffsets") == [0, 32, 64, 96]  # K=32 fp8 = 32 B per step
    tf32 = derived_mma(gemm(target="sm_100a", a=(128, 32), b=(128, 32), acc=(128, 128),
                            dtype="tf32"))
    assert get_ints(tf32, "cake.mma_shape") == [128, 128, 8]
    assert get_int(tf32, "cake.k_steps") == 4


def test_wide_k_walks_swizzle_atoms() -> None:
    # K = 128 bf16 = 256-B rows: two 128B atoms of 128 rows x 128 B = 16384 B each.
    mma = derived_mma(gemm(target="sm_100a", a=(128, 128), b=(128, 128), acc=(128, 128)))
    assert get_ints(mma, "cake.a_koffsets") == [0, 32, 64, 96, 16384, 16416, 16448, 16480]
    assert get_int(mma, "cake.k_steps") == 8


def test_wgmma_split_over_warpgroups() -> None:
    mma = derived_mma(gemm(target="sm_90a", a=(128, 64), b=(256, 64), acc=(128, 256),
                           regs=True, mma_warps="[4, 5, 6, 7, 8, 9, 10, 11]"))
    assert get_str(mma, "cake.instr") == "wgmma.m64n256k16.f32.bf16.bf16"
    assert get_u64(mma, "cake.a_desc") == 0x4000004000010000  # PTX.md worked example at 0
    assert get_u64(mma, "cake.a_desc") == wgmma_smem_desc(0, swizzle="128b", lbo=16, sbo=1024)
    assert get_int(mma, "cake.warpgroups") == 2
    assert get_ints(mma, "cake.a_moffsets") == [0, 64 * 128]
    assert "cake.idesc" not in mma.attributes


def test_wgmma_one_warpgroup_issues_both_m_blocks() -> None:
    mma = derived_mma(gemm(target="sm_90a", a=(128, 64), b=(128, 64), acc=(128, 128),
                           regs=True, mma_warps="[4, 5, 6, 7]", swizzle=", swizzle=64b"))
    assert get_u64(mma, "cake.b_desc") == wgmma_smem_desc(0, swizzle="64b", lbo=16, sbo=512)
    assert get_u64(mma, "cake.b_desc") >> 63 == 1  # bit 63 survives the i64 attribute
    assert get_ints(mma, "cake.a_moffsets") == [0, 64 * 64]
    assert get_int(mma, "cake.warpgroups") == 1


@pytest.mark.parametrize("target", ["sm_80", "sm_89", "sm_120a", "sm_100a"])
def test_register_accumulator_uses_mma_sync_off_hopper(target: str) -> None:
    mma = derived_mma(gemm(target=target, a=(64, 64), b=(64, 64), acc=(64, 64), regs=True))
    assert get_str(mma, "cake.instr") == "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"
    assert get_int(mma, "cake.k_steps") == 4
    assert "cake.a_desc" not in mma.attributes


@pytest.mark.parametrize("target,regs,mma_warps", [
    ("sm_90a", False, "[1]"),  # TMEM accumulator on Hopper
    ("sm_120a", False, "[1]"),  # no tcgen05 on consumer Blackwell
    ("sm_90a", True, "[1, 2]"),  # wgmma needs whole warpgroups
])
def test_no_form_derives_nothing(target: str, regs: bool, mma_warps: str) -> None:
    mma = derived_mma(gemm(target=target, a=(128, 64), b=(128, 64), acc=(128, 128), regs=regs,
                           mma_warps=mma_warps))
    assert not any(name.startswith("cake.") for name in mma.attributes)


def test_tcgen05_n_not_multiple_of_16_derives_nothing() -> None:
    mma = derived_mma(gemm(target="sm_100a", a=(128, 64), b=(72, 64), acc=(128, 72)))
    assert "cake.instr" not in mma.attributes
