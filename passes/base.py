"""What every Cake pass shares: where it reports diagnostics and how it names places.

Passes never raise on bad input: they report into the compilation's DiagnosticSink
(attached to the xDSL Context by the driver) so several independent errors surface at
once. Run outside the driver (e.g. through xdsl-opt), a pass still works: its
diagnostics are collected and raised together as one DiagnosticException at the end.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, StringAttr
from xdsl.ir import Operation

from cakec.diagnostics import DiagnosticSink, Span
from cakec.dialects.cake import KernelOp


def sink_of(ctx: Context) -> DiagnosticSink:
    sink = getattr(ctx, "cake_sink", None)
    if sink is None:
        sink = DiagnosticSink()
        ctx.cake_sink = sink  # type: ignore[attr-defined]
    return sink


def span_of(op: Operation, ctx: Context | None = None) -> Span | None:
    """The source span of an op: exact when the frontend recorded it, else its loc."""
    spans = getattr(ctx, "cake_spans", None) if ctx is not None else None
    if spans and op in spans:
        return spans[op]
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return Span(loc.filename.data, loc.line.data, loc.column.data)
    return None


def requested_target(kernel: KernelOp, ctx: Context, option: str = "") -> str:
    """What one kernel is compiled for: `--target` (pass option, then the driver's) wins,
    then the kernel's own `target=`, then the default. Each kernel of a file has its own."""
    from cakec.targets.sku import DEFAULT_TARGET

    forced = option or getattr(ctx, "cake_target", None)
    if forced:
        return forced
    return kernel.target.data if kernel.target is not None else DEFAULT_TARGET


def target_of(kernel: KernelOp, ctx: Context, option: str = "") -> str:
    """The kernel's target as derive-smem recorded it (`cake.target`), so every later pass
    agrees; a pass option still overrides it, and without a record it is requested_target."""
    recorded = kernel.attributes.get("cake.target")
    if isinstance(recorded, StringAttr) and not option:
        return recorded.data
    return requested_target(kernel, ctx, option)
