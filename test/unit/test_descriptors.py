"""Descriptor encoders checked bit by bit against values worked out by hand from
the PTX ISA field tables (shared/notes/PTX.md sections 6-7)."""

import pytest
from hypothesis import given, strategies as st

from cakec.targets.descriptors import (
    LAYOUTS,
    Swizzle,
    decode_fields,
    kmajor_layout,
    mnmajor_layout,
    kstep_advance,
    tcgen05_instr_desc,
    tcgen05_kind,
    tcgen05_smem_desc,
    wgmma_smem_desc,
)

# ---------------------------------------------------------------- wgmma smem

# Fields: addr>>4 @0, LBO>>4 @16, SBO>>4 @32, base_offset @49, swizzle @62.
WGMMA_CASES = [
    # PTX.md worked example: 0x40 | 1<<16 | 64<<32 | 1<<62.
    (dict(addr=0x400, swizzle="128b", lbo=16, sbo=1024), 0x4000004000010040),
    # 0x1000>>4 = 0x100; LBO 16>>4 = 1 -> 0x10000; SBO 1024>>4 = 0x40 -> 0x40_0000_0000;
    # 128B = 1 -> 1<<62 = 0x4000_0000_0000_0000.
    (dict(addr=0x1000, swizzle="128b", lbo=16, sbo=1024), 0x4000004000010100),
    # 64B atom: SBO = 8 rows x 64 B = 512 -> 0x20 << 32; 64B = 2 -> 2<<62 = 0x8000...
    (dict(addr=0x1000, swizzle="64b", lbo=16, sbo=512), 0x8000002000010100),
    # 32B atom: SBO = 8 x 32 = 256 -> 0x10 << 32; 32B = 3 -> 0xC000...
    (dict(addr=0x1000, swizzle="32b", lbo=16, sbo=256), 0xC000001000010100),
    # No swizzle, 64-row tile: LBO = 64*16 = 1024 -> 0x40<<16 = 0x40_0000;
    # SBO = 128 -> 8<<32 = 0x8_0000_0000; layout 0.
    (dict(addr=0x1000, swizzle="none", lbo=1024, sbo=128), 0x0000000800400100),
    # base_offset 3 -> 3<<49 = 0x0006_0000_0000_0000 on top of the 0x400 example.
    (dict(addr=0x400, swizzle="128b", lbo=16, sbo=1024, base_offset=3), 0x4006004000010040),
    # Largest encodable address/offsets: every 14-bit field all ones.
    (dict(addr=0x3FFF0, swizzle="none", lbo=0x3FFF0, sbo=0x3FFF0), 0x00003FFF3FFF3FFF),
]


@pytest.mark.parametrize("kwargs,expected", WGMMA_CASES)
def test_wgmma_smem_desc(kwargs, expected):
    assert wgmma_smem_desc(**kwargs) == expected
    assert wgmma_smem_desc(**kwargs | {"swizzle": Swizzle(kwargs["swizzle"])}) == expected


def test_wgmma_kstep_adds_to_low_field():
    # bf16 k16 inside a 128B atom: +32 B = +2 in the encoded start address.
    base = wgmma_smem_desc(0x400, swizzle="128b", lbo=16, sbo=1024)
    step = kstep_advance("128b", 2, 16)
    assert wgmma_smem_desc(0x400 + step, swizzle="128b", lbo=16, sbo=1024) == base + 2


# -------------------------------------------------------------- tcgen05 smem

# Same low fields as wgmma; bit 46 fixed 1 (0x4000_0000_0000); base_offset @49;
# lbo_mode @52; 3-bit swizzle @61 (none 0, 128B 2, 64B 4, 32B 6).
TCGEN05_SMEM_CASES = [
    # PTX.md worked example: 0x40 | 64<<32 | 1<<46 | 2<<61 (LBO left 0).
    (dict(addr=0x400, swizzle="128b", lbo=0, sbo=1024), 0x4000404000000040),
    # 0x200 | 1<<16 | 0x40<<32 | 1<<46 | 2<<61.
    (dict(addr=0x2000, swizzle="128b", lbo=16, sbo=1024), 0x4000404000010200),
    # 64B: SBO 512 -> 0x20<<32; 4<<61 = 0x8000_0000_0000_0000.
    (dict(addr=0x2000, swizzle="64b", lbo=16, sbo=512), 0x8000402000010200),
    # 32B: SBO 256 -> 0x10<<32; 6<<61 = 0xC000_0000_0000_0000.
    (dict(addr=0x2000, swizzle="32b", lbo=16, sbo=256), 0xC000401000010200),
    # none, 128-row tile: LBO 128*16 = 2048 -> 0x80<<16; SBO 128 -> 8<<32; swizzle 0.
    (dict(addr=0x2000, swizzle="none", lbo=2048, sbo=128), 0x0000400800800200),
    # lbo_mode 1 -> 1<<52 = 0x0010_0000_0000_0000; base_offset 7 -> 7<<49 = 0x000E_...
    (dict(addr=0x2000, swizzle="none", lbo=2048, sbo=128, base_offset=7, lbo_mode=1),
     0x001E400800800200),
]


@pytest.mark.parametrize("kwargs,expected", TCGEN05_SMEM_CASES)
def test_tcgen05_smem_desc(kwargs, expected):
    assert tcgen05_smem_desc(**kwargs) == expected


@pytest.mark.parametrize("swizzle", ["128b", "64b", "32b", "none"])
def test_tcgen05_smem_is_wgmma_plus_version_bit(swizzle):
    # The 3-bit sm100 codes are the 2-bit sm90 codes << 1, so bits 62-63 agree.
    args = dict(swizzle=swizzle, lbo=16, sbo=1024)
    assert tcgen05_smem_desc(0x800, **args) == wgmma_smem_desc(0x800, **args) | 1 << 46


# ------------------------------------------------------------- tcgen05 idesc

# Fields: D type @4 (f16 0, f32 1), A type @7, B type @10, negate A/B @13/14,
# transpose A/B @15/16, N>>3 @17, M>>4 @24.
IDESC_CASES = [
    # PTX.md: bf16 (1) -> 1<<7 = 0x80, 1<<10 = 0x400; f32 1<<4 = 0x10;
    # N 256>>3 = 32 -> 32<<17 = 0x40_0000; M 128>>4 = 8 -> 0x0800_0000.
    (dict(a_dtype="bf16", b_dtype="bf16", d_dtype="f32", m=128, n=256), 0x08400490),
    # N 128>>3 = 16 -> 0x20_0000.
    (dict(a_dtype="bf16", b_dtype="bf16", d_dtype="f32", m=128, n=128), 0x08200490),
    # f16 (0): no type bits; f32 0x10; N 8>>3 = 1 -> 0x2_0000; M 64>>4 = 4 -> 0x0400_0000.
    (dict(a_dtype="f16", b_dtype="f16", d_dtype="f32", m=64, n=8), 0x04020010),
    # Same with f16 accumulate: D code 0.
    (dict(a_dtype="f16", b_dtype="f16", d_dtype="f16", m=64, n=8), 0x04020000),
    # tf32 (2): 2<<7 = 0x100, 2<<10 = 0x800; f32 0x10; N 128 -> 0x20_0000; M 128.
    (dict(a_dtype="tf32", b_dtype="tf32", d_dtype="f32", m=128, n=128), 0x08200910),
    # e4m3 (0) both: only D, N 256 and M 128 bits: 0x10 | 0x40_0000 | 0x0800_0000.
    (dict(a_dtype="e4m3", b_dtype="e4m3", d_dtype="f32", m=128, n=256), 0x08400010),
    # e4m3 x e5m2 (1<<10 = 0x400) -> f16 (0); N 64>>3 = 8 -> 0x10_0000; M 64.
    (dict(a_dtype="e4m3", b_dtype="e5m2", d_dtype="f16", m=64, n=64), 0x04100400),
    # bf16 MN-major A and B, negate A: 0x08400490 | 1<<13 | 1<<15 | 1<<16
    # = 0x08400490 + 0x2000 + 0x8000 + 0x10000 = 0x0841A490.
    (dict(a_dtype="bf16", b_dtype="bf16", d_dtype="f32", m=128, n=256,
          a_major="MN", b_major="MN", negate_a=True), 0x0841A490),
    # negate B only: 1<<14 = 0x4000 on the N=128 example.
    (dict(a_dtype="bf16", b_dtype="bf16", d_dtype="f32", m=128, n=128, negate_b=True),
     0x08204490),
    # Largest M=64 N: 256>>3 = 32 -> 0x40_0000; f16 -> f32.
    (dict(a_dtype="f16", b_dtype="f16", d_dtype="f32", m=64, n=256), 0x04400010),
]


@pytest.mark.parametrize("kwargs,expected", IDESC_CASES)
def test_tcgen05_instr_desc(kwargs, expected):
    assert tcgen05_instr_desc(**kwargs) == expected


@pytest.mark.parametrize("a,b,kind", [
    ("bf16", "bf16", "f16"), ("f16", "f16", "f16"), ("tf32", "tf32", "tf32"),
    ("e4m3", "e4m3", "f8f6f4"), ("e4m3", "e5m2", "f8f6f4"), ("e5m2", "e4m3", "f8f6f4"),
])
def test_tcgen05_kind(a, b, kind):
    assert tcgen05_kind(a, b) == kind


# ------------------------------------------------------------ layout helpers

@pytest.mark.parametrize("rows,swizzle,elem_bytes,expected", [
    (128, "128b", 2, (16, 1024)),   # 8 rows x 128 B
    (64, "64b", 2, (16, 512)),      # 8 rows x 64 B
    (64, "32b", 4, (16, 256)),      # 8 rows x 32 B
    (64, "none", 2, (1024, 128)),   # LBO = 64 rows x 16 B, SBO = one 128-B core matrix
    (8, "none", 1, (128, 128)),
])
def test_kmajor_layout(rows, swizzle, elem_bytes, expected):
    assert kmajor_layout(rows, swizzle, elem_bytes) == expected


@pytest.mark.parametrize("swizzle,elem_bytes,k_elems,expected", [
    ("128b", 2, 16, 32),   # bf16 k16
    ("128b", 4, 8, 32),    # tf32 k8
    ("128b", 1, 32, 32),   # e4m3 k32
    ("64b", 2, 16, 32),
    ("32b", 2, 16, 32),    # one step fills the 32-B atom
    ("128b", 2, 64, 128),
])
def test_kstep_advance(swizzle, elem_bytes, k_elems, expected):
    assert kstep_advance(swizzle, elem_bytes, k_elems) == expected


def test_swizzle_span_and_str():
    assert [s.span for s in Swizzle] == [0, 32, 64, 128]
    assert str(Swizzle.B128) == "128b" and f"{Swizzle.B64}" == "64b"


# ------------------------------------------------------------- decode_fields

def test_decode_wgmma_example():
    assert decode_fields("wgmma_smem", 0x4006004000010040) == {
        "addr": 0x400, "lbo": 16, "sbo": 1024, "base_offset": 3, "swizzle": "128b",
        "reserved": 0,
    }


def test_decode_tcgen05_smem_example():
    assert decode_fields("tcgen05_smem", 0x4000404000000040) == {
        "addr": 0x400, "lbo": 0, "sbo": 1024, "version": 1, "base_offset": 0,
        "lbo_mode": 0, "swizzle": "128b", "reserved": 0,
    }


def test_decode_tcgen05_instr_example():
    assert decode_fields("tcgen05_instr", 0x0841A490, mma_kind="f16") == {
        "sparse_selector": 0, "sparse": 0, "saturate": 0, "d_dtype": "f32",
        "a_dtype": "bf16", "b_dtype": "bf16", "negate_a": True, "negate_b": False,
        "a_major": "MN", "b_major": "MN", "n": 256, "m": 128, "max_shift": 0,
        "reserved": 0,
    }


def test_decode_instr_without_kind_lists_candidates():
    d = decode_fields("tcgen05_instr", 0x08400490)
    assert (d["a_dtype"], d["b_dtype"]) == ("bf16|e5m2|i8", "bf16|e5m2|i8")
    assert decode_fields("tcgen05_instr", 0x08200910)["a_dtype"] == "tf32"
    assert decode_fields("tcgen05_instr", 0x08400010)["a_dtype"] == "f16|e4m3|u8"


def test_kind_i8_instr_desc():
    """kind::i8, s8 × s8 → s32 (D type 2, A/B type S8 = 1), M = 128, N = 128: the bits
    PTX ISA Table "Instruction descriptor" gives, field by field."""
    value = tcgen05_instr_desc(a_dtype="i8", b_dtype="i8", d_dtype="i32", m=128, n=128)
    assert value == (2 << 4) | (1 << 7) | (1 << 10) | (128 >> 3 << 17) | (128 >> 4 << 24)
    assert value == 0x082004A0
    d = decode_fields("tcgen05_instr", value, mma_kind="i8")
    assert (d["d_dtype"], d["a_dtype"], d["b_dtype"]) == ("i32", "i8", "i8")


def test_decode_flags_malformed_values():
    # Reserved bits 14-15 and 30-31 set; tcgen05 swizzle 3 and 1; D type 3; A type 7.
    assert decode_fields("wgmma_smem", 0xC000C000)["reserved"] == 0xC000C000
    assert decode_fields("tcgen05_smem", 3 << 61)["swizzle"] == "invalid(3)"
    assert decode_fields("tcgen05_smem", 1 << 61)["swizzle"] == "128b_base32b"
    assert decode_fields("tcgen05_instr", 3 << 4)["d_dtype"] == "invalid(3)"
    assert decode_fields("tcgen05_instr", 7 << 7)["a_dtype"] == "invalid(7)"
    assert decode_fields("tcgen05_instr", 1 << 23 | 1 << 29 | 1 << 6)["reserved"] == 0x20800040
    assert decode_fields("tcgen05_instr", 5 << 7, mma_kind="f16")["a_dtype"] == "invalid(5)"


def test_layout_fields_do_not_overlap():
    for kind, fields in LAYOUTS.items():
        seen = 0
        for f in fields:
            assert not seen & f.mask, (kind, f.name)
            seen |= f.mask


@pytest.mark.parametrize("kind,cases,encode", [
    ("wgmma_smem", WGMMA_CASES, wgmma_smem_desc),
    ("tcgen05_smem", TCGEN05_SMEM_CASES, tcgen05_smem_desc),
])
def test_smem_round_trip_examples(kind, cases, encode):
    for kwargs, value in cases:
        d = decode_fields(kind, value)
        assert d["reserved"] == 0
        assert {k: d[k] for k in kwargs} == kwargs
        args = {k: v for k, v in d.items() if k not in ("reserved", "version")}
        assert encode(**args) == value


@pytest.mark.parametrize("kwargs,value", IDESC_CASES)
def test_instr_round_trip_examples(kwargs, value):
    d = decode_fields("tcgen05_instr", value,
                      mma_kind=tcgen05_kind(kwargs["a_dtype"], kwargs["b_dtype"]))
    assert {k: d[k] for k in kwargs} == kwargs
    assert d["reserved"] == d["max_shift"] == d["sparse"] == 0


# ----------------------------------------------------------------- properties

_bytes = st.integers(0, (1 << 14) - 1).map(lambda x: x << 4)
_smem = st.fixed_dictionaries({
    "addr": _bytes, "lbo": _bytes, "sbo": _bytes,
    "base_offset": st.integers(0, 7), "swizzle": st.sampled_from([s.value for s in Swizzle]),
})


@given(_smem)
def test_wgmma_round_trip_property(kwargs):
    d = decode_fields("wgmma_smem", wgmma_smem_desc(**kwargs))
    assert d == kwargs | {"reserved": 0}


@given(_smem, st.integers(0, 1))
def test_tcgen05_smem_round_trip_property(kwargs, lbo_mode):
    kwargs = kwargs | {"lbo_mode": lbo_mode}
    d = decode_fields("tcgen05_smem", tcgen05_smem_desc(**kwargs))
    assert d == kwargs | {"version": 1, "reserved": 0}


_ab = st.sampled_from([
    ("bf16", "bf16"), ("f16", "f16"), ("tf32", "tf32"),
    ("e4m3", "e4m3"), ("e4m3", "e5m2"), ("e5m2", "e4m3"), ("e5m2", "e5m2"),
])


@st.composite
def _idesc_args(draw):
    a, b = draw(_ab)
    m = draw(st.sampled_from([64, 128]))
    step = 8 if m == 64 else 16
    return {
        "a_dtype": a, "b_dtype": b,
        "d_dtype": "f32" if a == "tf32" else draw(st.sampled_from(["f16", "f32"])),
        "m": m, "n": draw(st.integers(1, 256 // step)) * step,
        "a_major": draw(st.sampled_from(["K", "MN"])),
        "b_major": draw(st.sampled_from(["K", "MN"])),
        "negate_a": draw(st.booleans()), "negate_b": draw(st.booleans()),
    }


@given(_idesc_args())
def test_instr_round_trip_property(kwargs):
    value = tcgen05_instr_desc(**kwargs)
    assert 0 <= value < 1 << 32
    d = decode_fields("tcgen05_instr", value,
                      mma_kind=tcgen05_kind(kwargs["a_dtype"], kwargs["b_dtype"]))
    assert d == kwargs | {"sparse_selector": 0, "sparse": 0, "saturate": 0,
                          "max_shift": 0, "reserved": 0}


# ------------------------------------------------------------------- errors

_SMEM_OK = dict(swizzle="128b", lbo=16, sbo=1024)


@pytest.mark.parametrize("encode", [wgmma_smem_desc, tcgen05_smem_desc])
@pytest.mark.parametrize("addr,overrides,match", [
    (0x408, {}, "addr = 0x408 is not 16-byte aligned"),
    (-16, {}, "addr = -0x10 out of range"),
    (1 << 18, {}, "addr = 0x40000 out of range"),
    (0x400, {"lbo": 8}, "lbo = 0x8 is not 16-byte aligned"),
    (0x400, {"lbo": 1 << 18}, "lbo = 0x40000 out of range"),
    (0x400, {"sbo": 1000}, "sbo = 0x3e8 is not 16-byte aligned"),
    (0x400, {"sbo": -16}, "sbo = -0x10 out of range"),
    (0x400, {"base_offset": 8}, r"base_offset = 8 out of range \[0, 7\]"),
    (0x400, {"base_offset": -1}, "base_offset = -1 out of range"),
    (0x400, {"swizzle": "16b"}, "unknown swizzle '16b'"),
    (0x400, {"swizzle": "128b_base32b"}, "unknown swizzle"),
])
def test_smem_desc_errors(encode, addr, overrides, match):
    with pytest.raises(ValueError, match=match):
        encode(addr, **_SMEM_OK | overrides)


@pytest.mark.parametrize("lbo_mode", [2, -1])
def test_tcgen05_lbo_mode_error(lbo_mode):
    with pytest.raises(ValueError, match="lbo_mode"):
        tcgen05_smem_desc(0x400, **_SMEM_OK, lbo_mode=lbo_mode)


_IDESC_OK = dict(a_dtype="bf16", b_dtype="bf16", d_dtype="f32", m=128, n=256)


@pytest.mark.parametrize("overrides,match", [
    ({"a_dtype": "f32"}, "unsupported tcgen05 operand dtype 'f32'"),
    ({"b_dtype": "int8"}, "unsupported tcgen05 operand dtype 'int8'"),
    ({"b_dtype": "f16"}, "no tcgen05 MMA kind takes A=bf16 with B=f16"),
    ({"b_dtype": "e4m3"}, "no tcgen05 MMA kind takes A=bf16 with B=e4m3"),
    ({"a_dtype": "tf32", "b_dtype": "tf32", "d_dtype": "f16"}, "kind::tf32 cannot accumulate"),
    ({"d_dtype": "bf16"}, "kind::f16 cannot accumulate into 'bf16'"),
    ({"d_dtype": "s32"}, "cannot accumulate into 's32'"),
    ({"m": 256}, "M = 256 invalid for cta_group::1"),
    ({"m": 32}, "M = 32 invalid"),
    ({"m": 64, "n": 12}, "N = 12 invalid for M = 64; expected a multiple of 8 in \\[8, 256\\]"),
    ({"m": 64, "n": 0}, "N = 0 invalid"),
    ({"m": 64, "n": 264}, "N = 264 invalid"),
    ({"n": 8}, "N = 8 invalid for M = 128; expected a multiple of 16 in \\[16, 256\\]"),
    ({"n": 24}, "N = 24 invalid for M = 128"),
    ({"n": 272}, "N = 272 invalid"),
    ({"a_major": "M"}, "a_major = 'M'; expected 'K' or 'MN'"),
    ({"b_major": "k"}, "b_major = 'k'"),
])
def test_instr_desc_errors(overrides, match):
    with pytest.raises(ValueError, match=match):
        tcgen05_instr_desc(**_IDESC_OK | overrides)


@pytest.mark.parametrize("a,b", [("f16", "bf16"), ("tf32", "bf16"), ("e4m3", "f16"), ("x", "f16")])
def test_tcgen05_kind_errors(a, b):
    with pytest.raises(ValueError):
        tcgen05_kind(a, b)


@pytest.mark.parametrize("args,match", [
    ((0, "128b", 2), "rows = 0 must be a positive multiple of 8"),
    ((12, "none", 2), "rows = 12"),
    ((64, "128b", 3), "elem_bytes = 3"),
    ((64, "256b", 2), "unknown swizzle '256b'"),
])
def test_kmajor_layout_errors(args, match):
    with pytest.raises(ValueError, match=match):
        kmajor_layout(*args)


@pytest.mark.parametrize("args,match", [
    (("none", 2, 16), "no swizzle atom"),
    (("128b", 8, 16), "elem_bytes = 8"),
    (("128b", 2, 4), "must be a positive multiple of 16 bytes"),
    (("128b", 2, 0), "must be a positive multiple of 16 bytes"),
    (("128b", 2, -8), "must be a positive multiple of 16 bytes"),
    (("32b", 2, 32), "K step of 64 B exceeds the 32-B swizzle atom"),
    (("128b", 2, 128), "exceeds the 128-B"),
    (("bogus", 2, 16), "unknown swizzle"),
])
def test_kstep_advance_errors(args, match):
    with pytest.raises(ValueError, match=match):
        kstep_advance(*args)


@pytest.mark.parametrize("kind,value,kw,match", [
    ("wgmma", 0, {}, "unknown descriptor kind 'wgmma'"),
    ("wgmma_smem", 1 << 64, {}, "does not fit in 64 bits"),
    ("tcgen05_smem", -1, {}, "does not fit in 64 bits"),
    ("tcgen05_instr", 1 << 32, {}, "does not fit in 32 bits"),
    ("tcgen05_instr", 0, {"mma_kind": "f4"}, "unknown mma_kind 'f4'"),
])
def test_decode_errors(kind, value, kw, match):
    with pytest.raises(ValueError, match=match):
        decode_fields(kind, value, **kw)


@pytest.mark.parametrize("swizzle,atom_bytes,expected", [
    ("128b", 8192, (8192, 1024)),   # [64, 128] bf16 stage: column blocks of 64 rows x 128 B
    ("64b", 4096, (4096, 512)),
    ("32b", 2048, (2048, 256)),
])
def test_mnmajor_layout(swizzle, atom_bytes, expected):
    """MN-major (`view[s].T`): LBO steps one column block along M/N, SBO 8 K rows; the same
    numbers ran on the H200 (test/gpu/test_stage_store_gpu.py, Kᵀ·U at every swizzle)."""
    assert mnmajor_layout(swizzle, atom_bytes) == expected


def test_mnmajor_layout_needs_a_swizzle():
    with pytest.raises(ValueError, match="swizzled"):
        mnmajor_layout("none", 16384)
