"""CUDA C++ code generation: one verified, derived kernel → a `CudaUnit`, through the
backend of its target's family (`Sku.codegen` names the package of targets/ that lowers it:
sm80, sm90 or sm100). Adding a family means adding a package with a `backend(target)`
function and naming it in the SKU table."""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from cakec.diagnostics import SourceFile
from cakec.dialects.cake import KernelOp
from cakec.passes.base import sink_of, span_of
from cakec.targets.emit.emitter import Backend, CudaUnit, KernelEmitter
from cakec.targets.emit.unsupported import UNSUPPORTED
from cakec.targets.emit.watchdog import Watchdog
from cakec.targets.sku import SKUS


def emit_cuda(module: ModuleOp, ctx: Context, sources: Mapping[str, SourceFile] | None = None,
              watchdog: Watchdog | None = None) -> CudaUnit | None:
    """Emit the module's kernel for the target derive-smem recorded; diagnostics go to the
    context's sink and the result is None when anything could not be emitted. With
    `watchdog`, every lm.wait is a bounded spin (targets/emit/watchdog.py)."""
    sink = sink_of(ctx)
    kernels = [op for op in module.ops if isinstance(op, KernelOp)]
    if len(kernels) != 1:
        sink.error(UNSUPPORTED, f"code generation takes one kernel per file; this file has "
                   f"{len(kernels)}", span_of(kernels[1], ctx) if len(kernels) > 1 else None,
                   help="move each kernel into its own .cake file")
        return None
    target = kernels[0].attributes.get("cake.target")
    return KernelEmitter(kernels[0], ctx, sources or {},
                         backend_for(getattr(target, "data", "")), watchdog).run()


def backend_for(target: str) -> Backend | None:
    """The lowering backend of `target`, or None for a target outside the SKU table."""
    sku = SKUS.get(target)
    if sku is None:
        return None
    return importlib.import_module(f"cakec.targets.{sku.codegen}").backend(target)
