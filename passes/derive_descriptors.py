"""derive-descriptors: the instruction each `lm.mma` becomes and its descriptor bits.

The target picks the family: tcgen05.mma cta_group::1 for a TMEM accumulator on
sm_100a/103a (M = the accumulator's lanes, 128 or 64; N = its columns), wgmma m64nNk for a
register accumulator on sm_90a (the accumulator's M split across the role's warpgroups),
mma.sync m16n8k for a register accumulator elsewhere (no SMEM descriptors). The A/B SMEM
descriptors are K-major over the operand's whole stage with start address 0: the emitter
adds the stage address plus `cake.a_koffsets[k]` (K step k) and, for A, `cake.a_moffsets[m]`
(64- or 128-row block m). Where the target has no form for an MMA, nothing is derived: the
conformance gate reports it.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from cakec.dialects.cake import (
    DTYPES, MmaOp, StageOp, TileType, TmemType, ViewOp, dtype_name, stage_source,
)
from cakec.passes.base import target_of
from cakec.passes.derive_common import (
    get_int, get_str, kernels, ops_of, role_of, set_int, set_ints, set_str,
    warps_of,
)
from cakec.targets.descriptors import (
    kmajor_layout, kstep_advance, mnmajor_layout, tcgen05_instr_desc, tcgen05_kind,
    tcgen05_smem_desc,
    wgmma_smem_desc,
)
from cakec.targets.sku import SKUS, SWIZZLE_SPAN, WARPGROUP_WARPS, MmaForm, Sku

#: PTX spellings of .cake dtypes in instruction names.
PTX_TYPE = {"i8": "s8", "i32": "s32"}
#: A no-swizzle K-major operand is stored as 8-row × 16-B core matrices.
CORE_BYTES = 16


@dataclass(frozen=True)
class Operand:
    """An MMA operand: one stage of a view with derive-smem's layout."""

    name: str
    dtype: str
    rows: int  # M (A) or N (B)
    k: int
    swizzle: str
    atom_bytes: int
    mn_major: bool = False  # `view[s].T`: stored [K, M|N], M/N contiguous

    @property
    def elem(self) -> int:
        return DTYPES[self.dtype][1]

    @property
    def major(self) -> str:
        return "MN" if self.mn_major else "K"

    def layout(self) -> tuple[int, int]:
        """(LBO, SBO) of the operand's descriptor."""
        if self.mn_major:
            return mnmajor_layout(self.swizzle, self.atom_bytes)
        return kmajor_layout(self.rows, self.swizzle, self.elem)

    def k_offset(self, k_elems: int) -> int:
        """Byte offset of K element `k_elems` in the stage (a multiple of the K step)."""
        if self.mn_major:  # K is the row: a K step is whole rows of one column block
            return k_elems * SWIZZLE_SPAN[self.swizzle]
        kb = k_elems * self.elem
        if self.swizzle == "none":
            lbo, _ = kmajor_layout(self.rows, "none", self.elem)
            return kb // CORE_BYTES * lbo
        # Inside a swizzle atom K advances by plain bytes; atoms are whole column blocks.
        span = SWIZZLE_SPAN[self.swizzle]
        return kb // span * self.atom_bytes + kb % span

    def row_offset(self, row: int) -> int:
        """Byte offset of M/N row `row` (a multiple of 8) within a K column block; MN-major,
        of M/N element `row` (a multiple of 64): whole column blocks, then bytes in a span."""
        if self.mn_major:
            span = SWIZZLE_SPAN[self.swizzle]
            b = row * self.elem
            return b // span * self.atom_bytes + b % span
        return row * (SWIZZLE_SPAN[self.swizzle] or CORE_BYTES)


@dataclass(frozen=True)
class DeriveDescriptors(ModulePass):
    """Annotates MMAs: `cake.instr`, `cake.mma_shape` [m, n, k], `cake.k_steps`,
    `cake.a_desc`/`cake.b_desc`, `cake.a_koffsets`/`cake.b_koffsets`, `cake.a_moffsets`,
    `cake.idesc` (tcgen05) and `cake.warpgroups` (wgmma)."""

    name = "derive-descriptors"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            sku = SKUS.get(target_of(kernel, ctx, self.target))
            if sku is None:
                continue
            for mma in ops_of(kernel, MmaOp):
                try:
                    _derive(mma, sku)
                except ValueError:
                    # An encoder refused a field (shape, offset range, dtype): the gates
                    # name the cause in the author's terms; derive nothing here.
                    continue


def _operand(value) -> Operand | None:
    """A stage operand; `view[s].T` is stored [K, M|N] and read MN-major."""
    source, transposed = stage_source(value)
    stage = source.owner
    view = stage.view.owner if isinstance(stage, StageOp) else None
    if not isinstance(view, ViewOp):
        return None
    swizzle, atom_bytes = get_str(view, "cake.swizzle"), get_int(view, "cake.atom_bytes")
    dims = view.result.type.dims()
    if swizzle is None or atom_bytes is None or len(dims) != 2:
        return None
    if transposed and swizzle == "none":
        return None  # no lowering (the conformance gate: CAKE-H022)
    rows, k = dims[::-1] if transposed else dims
    return Operand(view.sym_name.data, dtype_name(view.result.type.element_type), rows, k,
                   swizzle, atom_bytes, transposed)


def _register_a(v) -> Operand | None:
    """A register-tile A operand (wgmma's register A), described like a stage: no layout
    (its registers are the accumulator layout of its role), offsets in elements."""
    t = v.type
    if not isinstance(t, TileType) or len(t.dims()) != 2:
        return None
    rows, k = t.dims()
    return Operand("", dtype_name(t.element_type), rows, k, "none", 0)


def _derive(mma: MmaOp, sku: Sku) -> None:
    registers = isinstance(mma.a.type, TileType)
    a, b = _register_a(mma.a) if registers else _operand(mma.a), _operand(mma.b)
    acc = mma.acc.type
    if a is None or b is None or len(acc.dims()) != 2:
        return
    m, n = acc.dims()
    d = dtype_name(acc.element_type)
    where = "tmem" if isinstance(acc, TmemType) else "regs"
    for form in sku.mma_forms_for(a.dtype, b.dtype, d):
        if form.acc_location != where or form.cta_group != 1 or a.k % form.k:
            continue
        if registers:  # only wgmma reads A from registers (the conformance gate: H017)
            if form.instruction == "wgmma" and form.allows(a.dtype, b.dtype, d, 64, n):
                return _wgmma(mma, form, a, b, m, n, d, register_a=True)
            continue
        if form.instruction == "tcgen05.mma" and form.allows(a.dtype, b.dtype, d, m, n):
            return _tcgen05(mma, form, a, b, m, n, d)
        if form.instruction == "wgmma" and form.allows(a.dtype, b.dtype, d, 64, n):
            return _wgmma(mma, form, a, b, m, n, d)
        if form.instruction == "mma.sync" and m % 16 == 0 and n % 8 == 0:
            return _mma_sync(mma, form, a, b, d)


def _shape(mma: Operation, instr: str, shape: tuple[int, int, int], k_total: int) -> None:
    set_str(mma, "cake.instr", instr)
    set_ints(mma, "cake.mma_shape", shape)
    set_int(mma, "cake.k_steps", k_total // shape[2])


def _koffsets(mma: Operation, form: MmaForm, a: Operand, b: Operand) -> None:
    steps = range(0, a.k, form.k)
    if a.swizzle != "none" and not a.mn_major:
        kstep_advance(a.swizzle, a.elem, form.k)  # the K step must stay inside an atom
    set_ints(mma, "cake.a_koffsets", [a.k_offset(k) for k in steps])
    set_ints(mma, "cake.b_koffsets", [b.k_offset(k) for k in steps])


def _tcgen05(mma: MmaOp, form: MmaForm, a: Operand, b: Operand, m: int, n: int,
             d: str) -> None:
    kind = tcgen05_kind(a.dtype, b.dtype)
    idesc = tcgen05_instr_desc(a_dtype=a.dtype, b_dtype=b.dtype, d_dtype=d, m=m, n=n,
                               a_major=a.major, b_major=b.major)
    descs = [tcgen05_smem_desc(0, swizzle=op.swizzle, lbo=lbo, sbo=sbo)
             for op in (a, b) for lbo, sbo in [op.layout()]]
    _shape(mma, f"tcgen05.mma.cta_group::1.kind::{kind}", (m, n, form.k), a.k)
    set_int(mma, "cake.a_desc", descs[0])
    set_int(mma, "cake.b_desc", descs[1])
    set_int(mma, "cake.idesc", idesc)
    _koffsets(mma, form, a, b)
    set_ints(mma, "cake.a_moffsets", [0])


def _wgmma(mma: MmaOp, form: MmaForm, a: Operand, b: Operand, m: int, n: int,
           d: str, register_a: bool = False) -> None:
    """A register A (`register_a`) has no descriptor: `cake.a_koffsets` are then the first
    K column of each step and `cake.a_moffsets` the first row of each 64-row block."""
    role = role_of(mma)
    warps = warps_of(role) if role is not None else []
    groups = len(warps) // WARPGROUP_WARPS
    # Each warpgroup owns M/groups rows of the accumulator, in 64-row instructions.
    if groups == 0 or len(warps) % WARPGROUP_WARPS or m % (64 * groups):
        return
    types = ".".join(PTX_TYPE.get(t, t) for t in (d, a.dtype, b.dtype))
    _shape(mma, f"wgmma.m64n{n}k{form.k}.{types}", (64, n, form.k), a.k)
    for key, op in (("cake.a_desc", a), ("cake.b_desc", b)):
        if op is not a or not register_a:
            lbo, sbo = op.layout()
            set_int(mma, key, wgmma_smem_desc(0, swizzle=op.swizzle, lbo=lbo, sbo=sbo))
    set_int(mma, "cake.warpgroups", groups)
    for key, op in (("cake.trans_a", a), ("cake.trans_b", b)):
        if op.mn_major:
            set_int(mma, key, 1)
    if register_a:
        steps = range(0, a.k, form.k)
        set_ints(mma, "cake.a_koffsets", list(steps))
        set_ints(mma, "cake.b_koffsets", [b.k_offset(k) for k in steps])
        set_ints(mma, "cake.a_moffsets", list(range(0, m, 64)))
        return
    _koffsets(mma, form, a, b)
    set_ints(mma, "cake.a_moffsets", [a.row_offset(r) for r in range(0, m, 64)])


def _mma_sync(mma: MmaOp, form: MmaForm, a: Operand, b: Operand, d: str) -> None:
    t = {x: PTX_TYPE.get(x, x) for x in (d, a.dtype, b.dtype)}
    _shape(mma, f"mma.sync.aligned.m16n8k{form.k}.row.col.{t[d]}.{t[a.dtype]}."
           f"{t[b.dtype]}.{t[d]}", (16, 8, form.k), a.k)
