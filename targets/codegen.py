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
              watchdog: Watchdog | None = None, kernel: str | None = None) -> CudaUnit | None:
    """Emit one kernel of the module for the target derive-smem recorded: the one named
    `kernel`, or the file's only kernel. Diagnostics go to the context's sink and the result
    is None when anything could not be emitted. With `watchdog`, every lm.wait is a bounded
    spin (targets/emit/watchdog.py)."""
    chosen = select_kernel(module, ctx, kernel)
    return None if chosen is None else emit_kernel(chosen, ctx, sources or {}, watchdog)


def select_kernel(module: ModuleOp, ctx: Context, name: str | None) -> KernelOp | None:
    """The kernel named `name`, or the only one when `name` is None; a diagnostic (and None)
    when there is no such kernel or the choice is ambiguous. A translation unit holds one
    kernel, so a file of several is emitted one kernel at a time."""
    kernels = [op for op in module.ops if isinstance(op, KernelOp)]
    names = ", ".join(f"`{k.sym_name.data}`" for k in kernels)
    if name is not None:
        found = [k for k in kernels if k.sym_name.data == name]
        if found:
            return found[0]
        sink_of(ctx).error(UNSUPPORTED, f"this file has no kernel named `{name}`",
                           span_of(kernels[0], ctx) if kernels else None,
                           help=f"its kernels: {names}")
        return None
    if len(kernels) == 1:
        return kernels[0]
    sink_of(ctx).error(UNSUPPORTED, f"this file has {len(kernels)} kernels ({names}); name the "
                       "one to emit", span_of(kernels[1], ctx) if len(kernels) > 1 else None,
                       help="`cakec emit --kernel NAME` (or `kernel=` in cakec.api); each "
                       "kernel is its own translation unit")
    return None


def emit_kernel(kernel: KernelOp, ctx: Context, sources: Mapping[str, SourceFile],
                watchdog: Watchdog | None = None) -> CudaUnit | None:
    """One kernel, through the backend of the target derive-smem recorded on it."""
    target = kernel.attributes.get("cake.target")
    return KernelEmitter(kernel, ctx, sources, backend_for(getattr(target, "data", "")),
                         watchdog).run()


def backend_for(target: str) -> Backend | None:
    """The lowering backend of `target`, or None for a target outside the SKU table."""
    sku = SKUS.get(target)
    if sku is None:
        return None
    return importlib.import_module(f"cakec.targets.{sku.codegen}").backend(target)
