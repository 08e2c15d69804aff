"""What every Cake pass shares: where it reports diagnostics and how it names places.

Passes never raise on bad input: they report into the compilation's DiagnosticSink
(attached to the xDSL Context by the driver) so several independent errors surface at
once. Run outside the driver (e.g. through xdsl-opt), a pass still works: its
diagnostics are collected and raised together as one DiagnosticException at the end.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation

from cakec.diagnostics import DiagnosticSink, Span


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


def target_of(module: ModuleOp, ctx: Context, option: str = "") -> str:
    """`--target` (pass option or driver) wins, then the kernel's own, then the default."""
    from cakec.targets.sku import DEFAULT_TARGET

    if option:
        return option
    forced = getattr(ctx, "cake_target", None)
    if forced:
        return forced
    from cakec.dialects.cake import KernelOp

    for op in module.ops:
        if isinstance(op, KernelOp) and op.target is not None:
            return op.target.data
    return DEFAULT_TARGET
