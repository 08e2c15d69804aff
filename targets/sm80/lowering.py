"""sm_80 / sm_89 / sm_120a / sm_121a lowerings: `copy_load` (cp.async), `lm.mma` with a
register accumulator as ldmatrix + mma.sync m16n8k16, and the accumulator's store.

Waits, arrivals and scalar code are the shared ones (targets/emit/barriers.py, common.py);
mma_sync.cuh beside this file renames the mbarrier helpers to their pre-sm_90 forms on
sm_80/sm_89. sm_120a/121a also keep `tma_load` as on sm_90a. What this file decides:

* `view.copy_load(T, ...)`: every thread of the role copies its share of the tile in
  16-byte cp.async chunks into the view's derived layout (column blocks, swizzle), zero-filling
  chunks outside T, then arrives with cp.async.mbarrier.arrive.noinc: one arrival per thread
  and event, the count derive-barriers initialised the barrier with.
* the accumulator: the MMA role's warps form a wm × wn grid (wm = 2 when the shape allows,
  else 1, then 4, 8), each warp owning a (M/wm) × (N/wn) block of m16n8 fragments in
  registers `float acc[MT][NT][4]`. mma.sync is synchronous, so `lm.commit` only has to order
  every warp's ldmatrix reads before the arrival: the role meets at its named barrier first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from xdsl.ir import SSAValue

from cakec.dialects.cake import (
    CommitOp, ConvertOp, CopyLoadOp, MmaOp, RegsOp, StageOp, TmaStoreOp, ViewOp, dtype_bytes,
    dtype_name, stage_source,
)
from cakec.targets.emit.cexpr import paren, scaled, unparen
from cakec.targets.emit.common import ACC_CTYPE, OUT_TRAITS
from cakec.targets.emit.emitter import KernelEmitter
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sm80.tiling import FRAG_M, FRAG_N, warp_tiling

#: Swizzle span in bytes per derive-smem mode (`none` uses the whole row).
_SPAN = {"32b": 32, "64b": 64, "128b": 128}


@dataclass(frozen=True)
class WarpTiling:
    """How a role's warps split an M × N register accumulator."""

    var: str
    wm: int
    wn: int
    mt: int  # m16 fragments per warp
    nt: int  # n8 fragments per warp
    first: int  # the role's first warp

    def origin(self) -> tuple[str, str]:
        """This warp's first accumulator row and column within the tile (C expressions)."""
        w = f"(cake_warp - {self.first}u)"
        return (f"{w} % {self.wm}u * {self.mt * FRAG_M}u",
                f"{w} / {self.wm}u * {self.nt * FRAG_N}u")


#: Per emitter: the register accumulators declared so far.
_TILINGS: "WeakKeyDictionary[KernelEmitter, dict[SSAValue, WarpTiling]]" = WeakKeyDictionary()


def tilings(em: KernelEmitter) -> dict[SSAValue, WarpTiling]:
    """The register accumulators declared so far (their layout is the tiles' layout)."""
    return _TILINGS.get(em, {})


def declare_acc(em: KernelEmitter, regs_op: RegsOp) -> None:
    role = em.role
    assert role is not None
    tilings = _TILINGS.setdefault(em, {})
    if regs_op.result in tilings:
        return
    m, n = regs_op.result.type.dims()
    grid = warp_tiling(m, n, len(role.warps))
    if grid is None or role.warps != list(range(role.first, role.first + len(role.warps))):
        em.unsupported(regs_op, f"a {m}x{n} register accumulator split over the "
                       f"{len(role.warps)} warps of role `{role.name}` (mma.sync needs "
                       "consecutive warps, each owning a multiple of 16x16)")
        return
    wm, wn = grid
    tiling = WarpTiling(em.names.fresh(regs_op.sym_name.data), wm, wn, m // wm // FRAG_M,
                        n // wn // FRAG_N, role.first)
    tilings[regs_op.result] = tiling
    em.source_comment(regs_op)
    dtype = dtype_name(regs_op.result.type.element_type)
    em.line(f"{ACC_CTYPE[dtype]} {tiling.var}[{tiling.mt}][{tiling.nt}][4];  // {m}x{n} {dtype}: "
            f"warps as "
            f"{wm}x{wn}, each {m // wm}x{n // wn} in mma.sync m16n8 fragments")


def _operand(em: KernelEmitter, value: SSAValue) -> str:
    """The `CakeOperand<span, atom bytes, swizzled>` arguments of an MMA operand stage."""
    stage = stage_source(value)[0].owner
    view = stage.view.owner if isinstance(stage, StageOp) else value.owner
    if not isinstance(view, ViewOp):
        raise Unsupported("an MMA operand that is not a view stage")
    return _layout(em, view)


def _layout(em: KernelEmitter, view: ViewOp) -> str:
    swizzle = em.attr_str(view, "cake.swizzle")
    _, cols = view.result.type.dims()
    row_bytes = cols * dtype_bytes(view.result.type.element_type)
    span = _SPAN.get(swizzle, row_bytes)
    atom = em.attr_int(view, "cake.atom_bytes")
    return f"{span}, {atom}, {'true' if swizzle in _SPAN else 'false'}"


def mma_sm80(em: KernelEmitter, op: MmaOp) -> None:
    """Per 32-byte K step: ldmatrix.x4 fragments of this warp's rows of A and B, then MT × NT
    mma.sync m16n8kK of the derived form (a traits type of mma_sync.cuh: bf16/f16 k16,
    tf32 k8, s8/e4m3/e5m2 k32); `init` zeroes the accumulator first."""
    tiling = _TILINGS.get(em, {}).get(op.acc)
    if tiling is None:
        raise Unsupported("an MMA whose accumulator is not a register tile of its role")
    instr = em.mma_instr(op)
    k_steps = em.attr_int(op, "cake.k_steps")
    form = re.fullmatch(r"mma\.sync\.aligned\.(m16n8k\d+)\.row\.col\.(\w+)\.(\w+)\.(\w+)\.\2",
                        instr)
    if form is None:
        raise Unsupported(f"the MMA form `{instr}`")
    mma_traits = "CakeMma_" + "_".join(form.groups())  # mma_sync.cuh defines one per form
    a_layout, b_layout = _operand(em, op.a), _operand(em, op.b)
    if not em.ok:
        return
    em.source_comment(op)
    init = em.val(op.init)
    row, col = tiling.origin()
    with em.block():
        if init != "false":
            em.line(f"if ({unparen(init)}) cake_zero_acc({tiling.var});")
        em.line(f"cake_mma_sync_tile<{tiling.mt}, {tiling.nt}, {k_steps}, "
                f"CakeOperand<{a_layout}>, CakeOperand<{b_layout}>, {mma_traits}>({tiling.var}, "
                f"{unparen(em.val(op.a))}, {unparen(em.val(op.b))}, {row}, {col});")


def commit_sm80(em: KernelEmitter, op: CommitOp) -> None:
    """mma.sync has completed when it returns: one arrival once every warp of the role is
    past its reads of the stage."""
    role = em.role
    assert role is not None
    em.source_comment(op)
    b = em.barrier_of(op.barrier)
    addr = em.bar_addr(b, em.val(op.stage))
    if role.single_thread:
        em.line(f"cake_mbar_arrive({addr});")
        return
    em.line(f"cake_named_barrier_sync({role.barrier_id}u, {32 * len(role.warps)}u);")
    em.line(f"if (cake_warp == {role.first}u && cake_lane_id() == 0u) cake_mbar_arrive({addr});")


def copy_load(em: KernelEmitter, op: CopyLoadOp) -> None:
    """Every thread of the role: its cp.async chunks of the tile, then its arrival."""
    role = em.role
    assert role is not None
    view = op.view.owner
    assert isinstance(view, ViewOp)
    rank = len(op.coords)
    if rank != 2 or len(view.result.type.dims()) != 2:
        raise Unsupported(f"a rank-{rank} copy_load")
    if role.warps != list(range(role.first, role.first + len(role.warps))):
        raise Unsupported(f"copy_load by role `{role.name}`, whose warps are not consecutive")
    rows, cols = view.result.type.dims()
    esize = dtype_bytes(view.result.type.element_type)
    if cols * esize % 16:
        raise Unsupported(f"copy_load of {cols}-element rows ({cols * esize} B: cp.async "
                          "copies 16-byte chunks)")
    b = em.barrier_of(op.barrier)
    s = em.val(op.stage)
    dst = em.views[view]
    if s != "0":
        dst = f"{dst} + (u32){paren(s)} * {em.attr_int(view, 'cake.stage_bytes')}u"
    threads = 32 * len(role.warps)
    em.source_comment(op)
    em.line(f"cake_copy_tile<{rows}, {cols}, {esize}, {_layout(em, view)}, {threads}>({dst}, "
            f"{em.val(op.tensor)}, {scaled(em.val(op.coords[0]), rows)}, "
            f"{scaled(em.val(op.coords[1]), cols)}, threadIdx.x - {32 * role.first}u);")
    em.line(f"cake_cp_async_arrive({em.bar_addr(b, s)});")


def tma_store_sm80(em: KernelEmitter, op: TmaStoreOp) -> None:
    """Register accumulator → global memory, converted and bounds-checked: each warp stores
    its own fragments."""
    value = op.value
    if isinstance(value.owner, ConvertOp):
        value = value.owner.source
    tiling = _TILINGS.get(em, {}).get(value)
    dtype = dtype_name(op.value.type.element_type)  # type: ignore[attr-defined]
    if tiling is None:
        raise Unsupported("`tma_store` of a value other than its role's register accumulator")
    rank = len(op.tensor.type.dims())  # type: ignore[attr-defined]
    if rank != 2 or dtype not in OUT_TRAITS:
        raise Unsupported(f"`tma_store` of {dtype} into a rank-{rank} tensor")
    tile_m, tile_n = op.value.type.dims()  # type: ignore[attr-defined]
    row, col = tiling.origin()
    em.source_comment(op)
    em.line(f"cake_store_mma_sync_tile<{tiling.mt}, {tiling.nt}, {OUT_TRAITS[dtype]}>("
            f"{tiling.var}, {em.val(op.tensor)}, "
            f"{scaled(em.val(op.coords[0]), tile_m)} + (i32)({row}), "
            f"{scaled(em.val(op.coords[1]), tile_n)} + (i32)({col}));")
