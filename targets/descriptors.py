"""Bit-exact encoders for the matrix descriptors consumed by wgmma (sm_90a) and
tcgen05.mma (sm_100a), plus a decoder that names every field.

The encoders run at compile time on static shared-memory offsets; the emitted
CUDA only adds runtime address bits to the low field. Field tables follow the
PTX ISA ("Matrix Descriptor Format" for wgmma, "Shared Memory Descriptor" and
"Instruction descriptor" for tcgen05); see shared/notes/PTX.md sections 6-7.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Swizzle(str, Enum):
    """The .cake swizzle tags; the value is the tag as written in source."""

    NONE = "none"
    B32 = "32b"
    B64 = "64b"
    B128 = "128b"

    def __str__(self) -> str:
        return self.value

    @property
    def span(self) -> int:
        """Bytes per swizzled row (the swizzle atom's inner extent); 0 for none."""
        return {"none": 0, "32b": 32, "64b": 64, "128b": 128}[self.value]


@dataclass(frozen=True)
class Field:
    name: str
    lsb: int
    width: int
    meaning: str

    @property
    def mask(self) -> int:
        return ((1 << self.width) - 1) << self.lsb


# Public so `cakec inspect` can print bit ranges next to decode_fields() values.
LAYOUTS: dict[str, tuple[Field, ...]] = {
    "wgmma_smem": (
        Field("addr", 0, 14, "start address >> 4 (18-bit shared address)"),
        Field("lbo", 16, 14, "leading-dimension byte offset >> 4"),
        Field("sbo", 32, 14, "stride-dimension byte offset >> 4"),
        Field("base_offset", 49, 3, "swizzle pattern phase of a misaligned start"),
        Field("swizzle", 62, 2, "layout: 0 none, 1 128B, 2 64B, 3 32B"),
    ),
    "tcgen05_smem": (
        Field("addr", 0, 14, "start address >> 4 (18-bit shared address)"),
        Field("lbo", 16, 14, "leading-dimension byte offset >> 4 (address if lbo_mode)"),
        Field("sbo", 32, 14, "stride-dimension byte offset >> 4"),
        Field("version", 46, 3, "fixed 0b001 on sm_100"),
        Field("base_offset", 49, 3, "swizzle pattern phase of a misaligned start"),
        Field("lbo_mode", 52, 1, "0 LBO relative, 1 LBO absolute (sm_103a)"),
        Field("swizzle", 61, 3, "0 none, 1 128B/32B-atom, 2 128B, 4 64B, 6 32B"),
    ),
    "tcgen05_instr": (
        Field("sparse_selector", 0, 2, "sparsity metadata selector"),
        Field("sparse", 2, 1, "1 = sparse MMA"),
        Field("saturate", 3, 1, "saturate D (kind::i8 only)"),
        Field("d_dtype", 4, 2, "D type: 0 f16, 1 f32, 2 s32"),
        Field("a_dtype", 7, 3, "A type, encoding depends on the MMA kind"),
        Field("b_dtype", 10, 3, "B type, encoding depends on the MMA kind"),
        Field("negate_a", 13, 1, "negate A"),
        Field("negate_b", 14, 1, "negate B"),
        Field("a_major", 15, 1, "A transpose: 0 K-major, 1 MN-major"),
        Field("b_major", 16, 1, "B transpose: 0 K-major, 1 MN-major"),
        Field("n", 17, 6, "N >> 3"),
        Field("m", 24, 5, "M >> 4"),
        Field("max_shift", 30, 2, "max shift (.ws only)"),
    ),
}
_WIDTH = {"wgmma_smem": 64, "tcgen05_smem": 64, "tcgen05_instr": 32}

_WGMMA_SWIZZLE = {Swizzle.NONE: 0, Swizzle.B128: 1, Swizzle.B64: 2, Swizzle.B32: 3}
_TCGEN05_SWIZZLE = {Swizzle.NONE: 0, Swizzle.B128: 2, Swizzle.B64: 4, Swizzle.B32: 6}
# Mode 1 (128B rows swizzled in 32-B atoms) has no .cake tag, so it is decode-only.
_TCGEN05_SWIZZLE_NAMES = {v: s.value for s, v in _TCGEN05_SWIZZLE.items()} | {1: "128b_base32b"}

# Operand type codes per tcgen05 MMA kind; the same code means different types
# in different kinds, which is why decoding an idesc needs the kind.
_KIND_TYPES: dict[str, dict[str, int]] = {
    "f16": {"f16": 0, "bf16": 1},
    "tf32": {"tf32": 2},
    "f8f6f4": {"e4m3": 0, "e5m2": 1, "e2m3": 3, "e3m2": 4, "e2m1": 5},
    "i8": {"u8": 0, "i8": 1},
}
# Only these have a .cake spelling; fp6/fp4 codes are recognised when decoding.
_ENCODABLE_AB = ("bf16", "f16", "tf32", "e4m3", "e5m2", "i8")
_KIND_ACCUM = {"f16": ("f16", "f32"), "tf32": ("f32",), "f8f6f4": ("f16", "f32"),
               "i8": ("i32",)}
_D_TYPES = {"f16": 0, "f32": 1, "i32": 2}  # i32: the PTX s32
_MAJORS = ("K", "MN")

# Shared-memory window addressed by descriptors: 18 bits, 16-B granules.
_ADDR_LIMIT = 1 << 18


def _swizzle(swizzle: Swizzle | str) -> Swizzle:
    try:
        return Swizzle(swizzle)
    except ValueError:
        tags = ", ".join(repr(s.value) for s in Swizzle)
        raise ValueError(f"unknown swizzle {swizzle!r}; expected one of {tags}") from None


def _byte_field(what: str, value: int) -> int:
    """Validate a 16-B-aligned byte quantity that is stored >> 4 in 14 bits."""
    if not 0 <= value < _ADDR_LIMIT:
        raise ValueError(f"{what} = {value:#x} out of range [0, {_ADDR_LIMIT:#x})")
    if value % 16:
        raise ValueError(f"{what} = {value:#x} is not 16-byte aligned")
    return value >> 4


def _pack(kind: str, raw: dict[str, int]) -> int:
    value = 0
    for f in LAYOUTS[kind]:
        v = raw.get(f.name, 0)
        assert 0 <= v < 1 << f.width, (kind, f.name, v)  # encoders validate first
        value |= v << f.lsb
    return value


def _smem_fields(addr: int, lbo: int, sbo: int, base_offset: int) -> dict[str, int]:
    if not 0 <= base_offset < 8:
        raise ValueError(f"base_offset = {base_offset} out of range [0, 7]")
    return {
        "addr": _byte_field("addr", addr),
        "lbo": _byte_field("lbo", lbo),
        "sbo": _byte_field("sbo", sbo),
        "base_offset": base_offset,
    }


def wgmma_smem_desc(
    addr: int, *, swizzle: Swizzle | str, lbo: int, sbo: int, base_offset: int = 0
) -> int:
    """64-bit sm_90a wgmma shared-memory matrix descriptor."""
    raw = _smem_fields(addr, lbo, sbo, base_offset)
    raw["swizzle"] = _WGMMA_SWIZZLE[_swizzle(swizzle)]
    return _pack("wgmma_smem", raw)


def tcgen05_smem_desc(
    addr: int,
    *,
    swizzle: Swizzle | str,
    lbo: int,
    sbo: int,
    base_offset: int = 0,
    lbo_mode: int = 0,
) -> int:
    """64-bit sm_100a tcgen05 shared-memory descriptor."""
    raw = _smem_fields(addr, lbo, sbo, base_offset)
    if lbo_mode not in (0, 1):
        raise ValueError(f"lbo_mode = {lbo_mode} must be 0 (relative) or 1 (absolute)")
    raw |= {"version": 1, "lbo_mode": lbo_mode,
            "swizzle": _TCGEN05_SWIZZLE[_swizzle(swizzle)]}
    return _pack("tcgen05_smem", raw)


def tcgen05_kind(a_dtype: str, b_dtype: str) -> str:
    """The tcgen05.mma .kind ("f16" | "tf32" | "f8f6f4" | "i8") for these operand types."""
    for name in (a_dtype, b_dtype):
        if name not in _ENCODABLE_AB:
            raise ValueError(f"unsupported tcgen05 operand dtype {name!r}; "
                             f"expected one of {', '.join(_ENCODABLE_AB)}")
    for kind, types in _KIND_TYPES.items():
        if a_dtype in types and b_dtype in types:
            # fp8 kinds mix e4m3/e5m2 freely; f16 and bf16 may not be mixed.
            if kind == "f8f6f4" or a_dtype == b_dtype:
                return kind
    raise ValueError(f"no tcgen05 MMA kind takes A={a_dtype} with B={b_dtype}")


def tcgen05_instr_desc(
    *,
    a_dtype: str,
    b_dtype: str,
    d_dtype: str,
    m: int,
    n: int,
    a_major: str = "K",
    b_major: str = "K",
    negate_a: bool = False,
    negate_b: bool = False,
) -> int:
    """32-bit dense tcgen05.mma instruction descriptor, cta_group::1 only."""
    kind = tcgen05_kind(a_dtype, b_dtype)
    if d_dtype not in _KIND_ACCUM[kind]:
        raise ValueError(f"kind::{kind} cannot accumulate into {d_dtype!r}; "
                         f"expected one of {', '.join(_KIND_ACCUM[kind])}")
    if m not in (64, 128):
        raise ValueError(f"M = {m} invalid for cta_group::1; expected 64 or 128")
    # M=128 tiles take N in steps of 16 (PTX valid-shape table, cta_group::1).
    step = 8 if m == 64 else 16
    if not (step <= n <= 256 and n % step == 0):
        raise ValueError(f"N = {n} invalid for M = {m}; expected a multiple of "
                         f"{step} in [{step}, 256]")
    for name, major in (("a_major", a_major), ("b_major", b_major)):
        if major not in _MAJORS:
            raise ValueError(f"{name} = {major!r}; expected 'K' or 'MN'")
    types = _KIND_TYPES[kind]
    return _pack("tcgen05_instr", {
        "d_dtype": _D_TYPES[d_dtype],
        "a_dtype": types[a_dtype],
        "b_dtype": types[b_dtype],
        "negate_a": int(negate_a),
        "negate_b": int(negate_b),
        "a_major": _MAJORS.index(a_major),
        "b_major": _MAJORS.index(b_major),
        "n": n >> 3,
        "m": m >> 4,
    })


def kmajor_layout(rows: int, swizzle: Swizzle | str, elem_bytes: int) -> tuple[int, int]:
    """(LBO, SBO) in bytes for a K-major tile of `rows` M/N rows.

    Swizzled: each row holds exactly one swizzle span of K, so 8-row atoms are
    8*span bytes apart (SBO) and LBO is unused; it is encoded as 16 B (field 1)
    by convention. No swizzle: we lay out 8x16-B core matrices (128 contiguous
    bytes each) down M/N first, then along K, so SBO = 128 (next 8 rows) and
    LBO = rows*16 (next 16-B K column).
    """
    sw = _swizzle(swizzle)
    if elem_bytes not in (1, 2, 4):
        raise ValueError(f"elem_bytes = {elem_bytes}; expected 1, 2 or 4")
    if rows <= 0 or rows % 8:
        raise ValueError(f"rows = {rows} must be a positive multiple of 8 (core-matrix height)")
    if sw is Swizzle.NONE:
        return rows * 16, 128
    return 16, 8 * sw.span


def mnmajor_layout(swizzle: Swizzle | str, atom_bytes: int) -> tuple[int, int]:
    """(LBO, SBO) in bytes for an MN-major (transposed) operand stored as derive-smem's
    column blocks: K rows of one swizzle span of M/N each, `atom_bytes` apart. The canonical
    MN-major swizzled layout repeats swizzle atoms (span bytes of M/N × 8 K rows) along M/N
    every LBO bytes and along K every SBO bytes: LBO = one column block, SBO = 8 rows."""
    sw = _swizzle(swizzle)
    if sw is Swizzle.NONE:
        raise ValueError("an MN-major operand needs a swizzled layout (rows of whole spans)")
    return atom_bytes, 8 * sw.span


def kstep_advance(swizzle: Swizzle | str, elem_bytes: int, k_elems: int) -> int:
    """Bytes to add to a descriptor's start address per K step inside a swizzle atom.

    The hardware applies the swizzle to the final address, so stepping K within
    a swizzled row is a plain byte offset (e.g. bf16 k16 -> 32 B).
    """
    sw = _swizzle(swizzle)
    if sw is Swizzle.NONE:
        raise ValueError("no swizzle atom without swizzle: advance K by "
                         "LBO * (k_bytes // 16) instead")
    if elem_bytes not in (1, 2, 4):
        raise ValueError(f"elem_bytes = {elem_bytes}; expected 1, 2 or 4")
    step = k_elems * elem_bytes
    if k_elems <= 0 or step % 16:
        raise ValueError(f"K step of {k_elems} x {elem_bytes} B must be a positive "
                         "multiple of 16 bytes")
    if step > sw.span:
        raise ValueError(f"K step of {step} B exceeds the {sw.span}-B swizzle atom")
    return step


def decode_fields(kind: str, value: int, *, mma_kind: str | None = None) -> dict[str, int | str]:
    """Named, interpreted fields of a descriptor; keys match the encoder kwargs.

    Byte fields are returned in bytes. `reserved` holds any set bits outside the
    known fields (nonzero means a malformed descriptor). For "tcgen05_instr",
    `mma_kind` resolves the A/B type codes; without it they read "f16|e4m3".
    """
    if kind not in LAYOUTS:
        raise ValueError(f"unknown descriptor kind {kind!r}; expected one of "
                         f"{', '.join(LAYOUTS)}")
    if not 0 <= value < 1 << _WIDTH[kind]:
        raise ValueError(f"{kind} value {value:#x} does not fit in {_WIDTH[kind]} bits")
    if mma_kind is not None and mma_kind not in _KIND_TYPES:
        raise ValueError(f"unknown mma_kind {mma_kind!r}; expected one of "
                         f"{', '.join(_KIND_TYPES)}")
    fields = LAYOUTS[kind]
    raw = {f.name: (value & f.mask) >> f.lsb for f in fields}
    known = 0
    for f in fields:
        known |= f.mask
    out: dict[str, int | str] = dict(raw)
    if kind == "tcgen05_instr":
        for op in ("a_dtype", "b_dtype"):
            out[op] = _type_name(raw[op], mma_kind)
        out["d_dtype"] = {v: k for k, v in _D_TYPES.items()}.get(
            raw["d_dtype"], f"invalid({raw['d_dtype']})")
        out["negate_a"], out["negate_b"] = bool(raw["negate_a"]), bool(raw["negate_b"])
        out["a_major"], out["b_major"] = _MAJORS[raw["a_major"]], _MAJORS[raw["b_major"]]
        out["n"], out["m"] = raw["n"] << 3, raw["m"] << 4
    else:
        for f in ("addr", "lbo", "sbo"):
            out[f] = raw[f] << 4
        names = ({v: s.value for s, v in _WGMMA_SWIZZLE.items()} if kind == "wgmma_smem"
                 else _TCGEN05_SWIZZLE_NAMES)
        out["swizzle"] = names.get(raw["swizzle"], f"invalid({raw['swizzle']})")
    out["reserved"] = value & ~known
    return out


def _type_name(code: int, mma_kind: str | None) -> str:
    kinds = [mma_kind] if mma_kind else list(_KIND_TYPES)
    names = [n for k in kinds for n, c in _KIND_TYPES[k].items() if c == code]
    return "|".join(names) if names else f"invalid({code})"
