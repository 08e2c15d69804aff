"""derive-tmem: the tensor-memory allocation a kernel makes and who makes it.

`tcgen05.alloc` takes a power of two in [32, 512] columns, so the kernel allocates the next
power of two covering every region's columns [col, col + width). One warp allocates: the
first warp of the role that issues MMAs into TMEM (it also frees), else warp 0. Demand over
the target's columns (CAKE-H050) and a region too narrow or too tall for its shape
(CAKE-H051) are reported at the region's declaration.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cakec.diagnostics import DiagnosticSink, Note
from cakec.dialects.cake import KernelOp, MmaOp, TmemOp, TmemType, dtype_bytes, dtype_name
from cakec.passes.base import sink_of, span_of, target_of
from cakec.passes.derive_common import (
    kernels, ops_of, role_of, set_int, sym, warps_of,
)
from cakec.targets.sku import (
    SKUS, TMEM_ALLOC_MAX_COLUMNS, TMEM_LANES, tmem_alloc_columns,
)

#: A TMEM cell is 32 bits wide; narrower elements pack into it.
CELL_BYTES = 4


@dataclass(frozen=True)
class DeriveTmem(ModulePass):
    """Annotates regions (`cake.col`, `cake.width`) and kernels (`cake.tmem_alloc`,
    `cake.tmem_warp`)."""

    name = "derive-tmem"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sink = sink_of(ctx)
        for kernel in kernels(op):
            target = target_of(kernel, ctx, self.target)
            sku = SKUS.get(target)
            # A target without TMEM still gets a layout; the conformance gate rejects it.
            limit = sku.tmem_columns if sku and sku.tmem_columns else TMEM_ALLOC_MAX_COLUMNS
            _derive(kernel, ctx, sink, limit)


def _derive(kernel: KernelOp, ctx: Context, sink: DiagnosticSink, limit: int) -> None:
    regions = list(ops_of(kernel, TmemOp))
    ok = True
    for region in regions:
        ok &= _check_shape(region, ctx, sink)
        set_int(region, "cake.col", region.cols.value.data)
        set_int(region, "cake.width", region.width.value.data)
    if not regions:
        set_int(kernel, "cake.tmem_alloc", 0)
        return
    widest = max(regions, key=_end)
    if _end(widest) > limit:
        _over_capacity(widest, regions, ctx, sink, limit)
        return
    if ok:
        set_int(kernel, "cake.tmem_alloc", tmem_alloc_columns(_end(widest)))
        set_int(kernel, "cake.tmem_warp", _alloc_warp(kernel))


def _end(region: TmemOp) -> int:
    return region.cols.value.data + region.width.value.data


def _check_shape(region: TmemOp, ctx: Context, sink: DiagnosticSink) -> bool:
    """A region holds lanes × columns of 32-bit cells: its shape must fit its width."""
    ty: TmemType = region.result.type
    lanes, *rest = ty.dims()
    cols = -(-(rest[-1] if rest else 1) * dtype_bytes(ty.element_type) // CELL_BYTES)
    width = region.width.value.data
    what = f"{'×'.join(map(str, ty.dims()))} {dtype_name(ty.element_type)}"
    if len(ty.dims()) != 2 or lanes > TMEM_LANES:
        sink.error("CAKE-H051", f"TMEM region `{sym(region)}` holds {what}, but TMEM has "
                   f"{TMEM_LANES} lanes: a region's shape is (lanes ≤ {TMEM_LANES}, columns)",
                   span_of(region, ctx), help="split the accumulator into 128-row regions")
        return False
    if width < cols:
        sink.error("CAKE-H051", f"TMEM region `{sym(region)}` holds {what}, which needs {cols} "
                   f"columns, but its width is {width}", span_of(region, ctx),
                   help=f"declare it with `width={cols}`")
        return False
    return True


def _over_capacity(widest: TmemOp, regions: list[TmemOp], ctx: Context,
                   sink: DiagnosticSink, limit: int) -> None:
    notes = [Note(span_of(r, ctx), f"`{sym(r)}` uses columns [{r.cols.value.data}, {_end(r)})")
             for r in regions if r is not widest]
    sink.error("CAKE-H050", f"TMEM demand of {_end(widest)} columns exceeds the {limit} "
               f"columns of tensor memory: region `{sym(widest)}` uses columns "
               f"[{widest.cols.value.data}, {_end(widest)})", span_of(widest, ctx), notes=notes,
               help=f"keep every region within columns [0, {limit}): reduce `width` or reuse "
               "columns of a region that is no longer live")


def _alloc_warp(kernel: KernelOp) -> int:
    for mma in ops_of(kernel, MmaOp):
        role = role_of(mma)
        if isinstance(mma.acc.type, TmemType) and role is not None and warps_of(role):
            return min(warps_of(role))
    return 0
