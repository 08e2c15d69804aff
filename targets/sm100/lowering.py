"""sm_100a / sm_103a lowerings: tcgen05.mma into Tensor Memory, tcgen05.commit, tcgen05.ld.

The rest of the emitter is shared (targets/emit: TMA loads, waits, arrivals, scalar code).
What this file decides, and why:

* TMEM: the warp derive-tmem chose (`cake.tmem_warp`) allocates `cake.tmem_alloc` columns
  into an SMEM slot at entry, before the block-wide barrier every thread reads it after;
  the same warp frees them at exit after a second block-wide barrier (every MMA has been
  waited for by then: the epilogue waited on the MMA role's last commit).
* `lm.mma` with a TMEM accumulator: one thread (lane 0 of the role's first warp) issues
  `cake.k_steps` tcgen05.mma with the derived descriptors advanced by the derived k-offsets;
  `lm.commit` is tcgen05.commit from that same thread (commit tracks the issuing thread's
  MMAs), one arrival, which is what derive-barriers counts.
* waits are followed by tcgen05.fence::after_thread_sync and `lm.arrive` is preceded by
  fence::before_thread_sync, so TMEM reads and MMAs are ordered by the mbarrier protocol.
* `C.tma_store(tmem.to(dtype), coords)`: a 4-warp role whose warps cover the 4 TMEM lane
  quarters; each thread owns one accumulator row (M = 128 rows = TMEM lanes) and moves it in
  32-column tcgen05.ld chunks straight to global memory, bounds-checked.
* cta_group::2 (2-CTA MMA) is reported as not yet supported rather than emitted.
* a register accumulator (and `copy_load`) lowers as on sm_80 (targets/sm80: mma.sync).
"""

from __future__ import annotations

import re

from xdsl.ir import Operation

from cakec.dialects.cake import (
    ArriveOp, CommitOp, ConvertOp, MmaOp, TmaStoreOp, TmemOp, WaitOp, dtype_name,
)
from cakec.passes.derive_common import walk
from cakec.targets.cluster import multicast_axes
from cakec.targets.emit import barriers
from cakec.targets.emit.cexpr import desc_operand, paren, scaled, unparen
from cakec.targets.emit.common import ACC_CTYPE, OUT_TRAITS
from cakec.targets.emit.emitter import KernelEmitter, role_of
from cakec.targets.emit.unsupported import Unsupported
from cakec.targets.sm80 import lowering as sm80

#: The TMEM address tcgen05.alloc wrote (every thread reads it after the entry barrier).
TMEM_BASE = "cake_tmem"
#: Accumulator rows per tcgen05.mma cta_group::1 (M) = TMEM lanes a 4-warp epilogue covers.
TMEM_ROWS = 128
_KINDS = ("f16", "tf32", "f8f6f4", "i8")


def _issuer(em: KernelEmitter) -> str:
    """The one thread that issues a role's MMAs and their commits."""
    role = em.role
    assert role is not None
    return f"cake_warp == {role.first}u && cake_lane_id() == 0u"


def tmem_entry(em: KernelEmitter) -> None:
    """Allocate TMEM by the derived warp and publish the address to every thread."""
    columns = em.attr_int(em.kernel, "cake.tmem_alloc")
    if not columns:
        return
    warp = em.attr_int(em.kernel, "cake.tmem_warp")
    em.line(f"// TMEM: warp {warp} allocates {columns} columns (tcgen05.alloc writes the "
            "address to shared memory).")
    em.line("__shared__ __align__(4) u32 cake_tmem_slot;")
    with em.block(f"if (cake_warp == {warp}u)"):
        em.line(f"cake_tmem_alloc<{columns}u>(cake_smem_addr(&cake_tmem_slot));")
    em.line("cake_tcgen05_fence_before();")
    em.line("__syncthreads();")
    em.line("cake_tcgen05_fence_after();")
    em.line(f"const u32 {TMEM_BASE} = cake_tmem_slot;")
    em.line()


def tmem_exit(em: KernelEmitter) -> None:
    """Every role is done (and has waited for the MMAs it reads): free TMEM."""
    columns = em.attr_int(em.kernel, "cake.tmem_alloc")
    if not columns:
        return
    warp = em.attr_int(em.kernel, "cake.tmem_warp")
    em.line(f"// Exit: every role is done with TMEM; warp {warp} frees it.")
    em.line("cake_tcgen05_fence_before();")
    em.line("__syncthreads();")
    with em.block(f"if (cake_warp == {warp}u)"):
        em.line("cake_tcgen05_fence_after();")
        em.line(f"cake_tmem_dealloc<{columns}u>({TMEM_BASE});")


def tmem_addr(em: KernelEmitter, region: Operation) -> str:
    col = em.attr_int(region, "cake.col")
    return f"{TMEM_BASE} + {col}u" if col else TMEM_BASE


def wait_sm100(em: KernelEmitter, op: WaitOp) -> None:
    barriers.wait(em, op)
    em.line("cake_tcgen05_fence_after();  // order later tcgen05 ops after the wait")


def arrive_sm100(em: KernelEmitter, op: ArriveOp) -> None:
    em.source_comment(op)
    em.line("cake_tcgen05_fence_before();  // this role's tcgen05.ld complete before the arrival")
    b = em.barrier_of(op.barrier)
    em.release(b, em.bar_addr(b, em.val(op.stage)), per_warpgroup=False)


def mma_sm100(em: KernelEmitter, op: MmaOp) -> None:
    """k_steps tcgen05.mma from one thread: descriptor = derived bits + (stage address +
    k-offset) >> 4; the first step overwrites the accumulator when `init` holds."""
    region = op.acc.owner
    if not isinstance(region, TmemOp):
        sm80.mma_sm80(em, op)
        return
    instr = em.mma_instr(op)
    if "cta_group::2" in instr:
        raise Unsupported("a 2-CTA MMA (tcgen05.mma.cta_group::2)")
    form = re.fullmatch(r"tcgen05\.mma\.cta_group::1\.kind::(\w+)", instr)
    if form is None or form.group(1) not in _KINDS:
        raise Unsupported(f"the MMA form `{instr}`")
    shape = em.attr_ints(op, "cake.mma_shape")
    a_desc, b_desc = em.attr_u64(op, "cake.a_desc"), em.attr_u64(op, "cake.b_desc")
    idesc = em.attr_int(op, "cake.idesc")
    a_k, b_k = em.attr_ints(op, "cake.a_koffsets"), em.attr_ints(op, "cake.b_koffsets")
    a_m = em.attr_ints(op, "cake.a_moffsets")
    if not em.ok:
        return
    acc_m, acc_n = region.result.type.dims()
    if len(a_m) != 1 or len(shape) != 3 or (shape[0], shape[1]) != (acc_m, acc_n):
        raise Unsupported(f"a {acc_m}x{acc_n} TMEM accumulator split over several "
                          f"tcgen05.mma shapes")
    em.source_comment(op)
    init = em.val(op.init)
    first = {"true": "0u", "false": "1u"}.get(init, f"(u32)!{paren(init)}")
    with em.block(f"if ({_issuer(em)})"):
        em.line(f"const u32 cake_a = {unparen(em.val(op.a))};")
        em.line(f"const u32 cake_b = {unparen(em.val(op.b))};")
        for k, (ak, bk) in enumerate(zip(a_k, b_k)):
            em.line(f"cake_tcgen05_mma_{form.group(1)}({tmem_addr(em, region)}, "
                    f"{desc_operand(a_desc, 'cake_a', a_m[0] + ak)}, {desc_operand(b_desc, 'cake_b', bk)}, "
                    f"{idesc:#x}u, {first if k == 0 else '1u'});")


def commit_sm100(em: KernelEmitter, op: CommitOp) -> None:
    """tcgen05.commit from the MMA-issuing thread: one arrival once its MMAs completed. A
    role that issues no tcgen05.mma (none, or synchronous mma.sync) arrives as on sm_80."""
    role = em.role
    assert role is not None
    if multicast_axes(op):  # tcgen05.commit's .multicast::cluster form is not emitted yet
        raise Unsupported("`lm.commit(..., multicast=)` (tcgen05.commit's multicast form)")
    b = em.barrier_of(op.barrier)
    addr = em.bar_addr(b, em.val(op.stage))
    if role.single_thread or not _issues_mma(em):
        sm80.commit_sm80(em, op)
        return
    em.source_comment(op)
    em.line(f"if ({_issuer(em)}) cake_tcgen05_commit({addr});")


def _issues_mma(em: KernelEmitter) -> bool:
    """Whether the current role issues tcgen05.mma (an MMA into TMEM)."""
    role = em.role
    if role is None:
        return False
    got = role.memo.get("tcgen05_mma")
    if got is None:  # one walk of the kernel per role, not one per commit
        got = role.memo["tcgen05_mma"] = any(
            isinstance(o, MmaOp) and isinstance(o.acc.owner, TmemOp) and role_of(o) is role.op
            for o in walk(em.kernel))
    return got


def tma_store_sm100(em: KernelEmitter, op: TmaStoreOp) -> None:
    """TMEM accumulator → registers (tcgen05.ld, 32 columns at a time) → global memory: each
    thread of a 4-warp role owns one accumulator row, its TMEM lane."""
    role = em.role
    assert role is not None
    convert_op = op.value.owner
    region = convert_op.source.owner if isinstance(convert_op, ConvertOp) else None
    dtype = dtype_name(op.value.type.element_type)  # type: ignore[attr-defined]
    if not isinstance(region, TmemOp):
        sm80.tma_store_sm80(em, op)
        return
    rank = len(op.tensor.type.dims())  # type: ignore[attr-defined]
    if rank != 2 or dtype not in OUT_TRAITS:
        raise Unsupported(f"`tma_store` of {dtype} into a rank-{rank} tensor")
    rows, cols = region.result.type.dims()
    quarters = sorted(w % 4 for w in role.warps)
    if rows not in (64, TMEM_ROWS) or cols % 32 or quarters != [0, 1, 2, 3]:
        raise Unsupported(f"reading a {rows}x{cols} TMEM accumulator from role `{role.name}` "
                          "(a 64- or 128-row accumulator, columns a multiple of 32, read by 4 "
                          "warps that cover the 4 TMEM lane quarters)")
    em.source_comment(op)
    with em.block():
        em.line("const u32 cake_quarter = cake_warp % 4u;  // TMEM lanes this warp may read")
        row0 = scaled(em.val(op.coords[0]), rows)
        if rows == TMEM_ROWS:  # row m in lane m
            em.line(f"const i32 cake_row = {row0} + (i32)(32u * cake_quarter + cake_lane_id());")
        else:  # M = 64: row m in lane m % 16 + 32 (m / 16); lanes 16-31 of a quarter hold none
            em.line(f"const i32 cake_row = cake_lane_id() < 16u ? {row0} + "
                    "(i32)(16u * cake_quarter + cake_lane_id()) : 0x7fffffff;")
        em.line(f"const i32 cake_col = {scaled(em.val(op.coords[1]), cols)};")
        acc_type = ACC_CTYPE[dtype_name(region.result.type.element_type)]
        em.line(f"cake_store_tmem_row<{cols}, {OUT_TRAITS[dtype]}, {acc_type}>("
                f"{tmem_addr(em, region)} + "
                f"((32u * cake_quarter) << 16), {em.val(op.tensor)}, cake_row, cake_col);")
