"""sm_80 / sm_89 / sm_120a / sm_121a lowerings: `copy_load` (cp.async), `lm.mma` with a
register accumulator as ldmatrix + mma.sync m16n8k16, and the accumulator's store.

Registered into `cuda_emit.LOWERINGS` (waits, arrivals and scalar code are shared with
sm_90a; targets/cuda_emit_sm80.cuh renames the mbarrier helpers to their pre-sm_90 forms on
sm_80/sm_89). sm_120a/121a also keep `tma_load` as on sm_90a. What this file decides:

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

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from xdsl.ir import Operation, SSAValue

from cakec.dialects.cake import (
    ArriveOp, CommitOp, ConvertOp, CopyLoadOp, FenceProxyOp, MmaOp, RegsOp, StageOp,
    TmaLoadOp, TmaStoreOp, ViewOp, WaitOp, dtype_bytes, dtype_name,
)
from cakec.targets import cuda_emit as ce
from cakec.targets.cuda_emit import KernelEmitter, Unsupported

#: Rows × columns of one mma.sync fragment (m16n8); B fragments come two n8 tiles at a time.
FRAG_M, FRAG_N, PAIR_N = 16, 8, 16
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


def warp_tiling(m: int, n: int, warps: int) -> tuple[int, int] | None:
    """(wm, wn) with wm × wn = warps and every warp's block a whole number of m16 × n16."""
    for wm in (2, 1, 4, 8, 16):
        if warps % wm == 0 and m % (wm * FRAG_M) == 0 and n % (warps // wm * PAIR_N) == 0:
            return wm, warps // wm
    return None


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
    em.line(f"float {tiling.var}[{tiling.mt}][{tiling.nt}][4];  // {m}x{n} f32: warps as "
            f"{wm}x{wn}, each {m // wm}x{n // wn} in mma.sync m16n8 fragments")


def _operand(em: KernelEmitter, value: SSAValue) -> str:
    """The `CakeOperand<span, atom bytes, swizzled>` arguments of an MMA operand stage."""
    stage = value.owner
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
    """Per k16 step: ldmatrix.x4 fragments of this warp's rows of A and B, then MT × NT
    mma.sync m16n8k16 (templated in cuda_emit_sm80.cuh); `init` zeroes the accumulator first."""
    tiling = _TILINGS.get(em, {}).get(op.acc)
    if tiling is None:
        raise Unsupported("an MMA whose accumulator is not a register tile of its role")
    instr = em.mma_instr(op)
    k_steps = em.attr_int(op, "cake.k_steps")
    if instr not in ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
                     "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"):
        raise Unsupported(f"the MMA form `{instr}`")
    a_layout, b_layout = _operand(em, op.a), _operand(em, op.b)
    if not em.ok:
        return
    em.source_comment(op)
    init = em.val(op.init)
    row, col = tiling.origin()
    with em.block():
        if init != "false":
            em.line(f"if ({ce._unparen(init)}) cake_zero_acc({tiling.var});")
        em.line(f"cake_mma_sync_tile<{tiling.mt}, {tiling.nt}, {k_steps}, "
                f"CakeOperand<{a_layout}>, CakeOperand<{b_layout}>, "
                f"{'true' if '.bf16.' in instr else 'false'}>({tiling.var}, "
                f"{ce._unparen(em.val(op.a))}, {ce._unparen(em.val(op.b))}, {row}, {col});")


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
        dst = f"{dst} + (u32){ce._paren(s)} * {em.attr_int(view, 'cake.stage_bytes')}u"
    threads = 32 * len(role.warps)
    em.source_comment(op)
    em.line(f"cake_copy_tile<{rows}, {cols}, {esize}, {_layout(em, view)}, {threads}>({dst}, "
            f"{em.val(op.tensor)}, {ce._scaled(em.val(op.coords[0]), rows)}, "
            f"{ce._scaled(em.val(op.coords[1]), cols)}, threadIdx.x - {32 * role.first}u);")
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
    if rank != 2 or dtype not in ce._OUT:
        raise Unsupported(f"`tma_store` of {dtype} into a rank-{rank} tensor")
    tile_m, tile_n = op.value.type.dims()  # type: ignore[attr-defined]
    row, col = tiling.origin()
    em.source_comment(op)
    em.line(f"cake_store_mma_sync_tile<{tiling.mt}, {tiling.nt}, {ce._OUT[dtype]}>("
            f"{tiling.var}, {em.val(op.tensor)}, "
            f"{ce._scaled(em.val(op.coords[0]), tile_m)} + (i32)({row}), "
            f"{ce._scaled(em.val(op.coords[1]), tile_n)} + (i32)({col}));")


_SM80: dict[type[Operation], ce.Lowering] = ce._COMMON | {
    WaitOp: ce.wait_sm90, ArriveOp: ce.arrive_sm90, CommitOp: commit_sm80,
    FenceProxyOp: ce.fence_proxy, MmaOp: mma_sm80, ConvertOp: ce.convert,
    TmaStoreOp: tma_store_sm80, CopyLoadOp: copy_load, RegsOp: declare_acc,
}


def register() -> None:
    """The sm_80 table (also sm_89), and sm_120a/121a with TMA loads as on sm_90a."""
    headers = ("cuda_emit_sm90.cuh", "cuda_emit_sm80.cuh")
    for target in ("sm_80", "sm_89", "sm_120a", "sm_121a"):
        ce.LOWERINGS[target] = _SM80 | ({TmaLoadOp: ce.tma_load_sm90}
                                        if target.endswith("a") else {})
        ce.SUPPORT_HEADERS[target] = headers
