"""verify-lowering: verify implies emit (CAKE-H100 at verify time).

The last gate lowers every kernel that passed the others for its target, as `cakec emit`
would (a dry run of the CUDA emitter, targets/codegen.py and its family backends), so that a construct the code
generator does not lower for that target is refused by `cakec verify` with the emitter's own
diagnostic, and never first discovered by `cakec emit` after a clean verify. Asking the
lowering itself, rather than restating its limits as checks, keeps one place per limit.

The units it builds are kept on the context (`cake_units`), so emitting a verified
compilation does not lower it twice. After an error from an earlier pass or gate it does
nothing: the emitter's input contract is a verified, derived kernel.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from cakec.dialects.cake import KernelOp
from cakec.passes.base import sink_of, target_of


@dataclass(frozen=True)
class VerifyLowering(ModulePass):
    name = "verify-lowering"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if sink_of(ctx).has_errors:
            return
        from cakec.targets.codegen import backend_for
        from cakec.targets.emit.emitter import KernelEmitter

        sources = getattr(ctx, "cake_sources", {})
        ctx.cake_units = {  # type: ignore[attr-defined]
            kernel: KernelEmitter(kernel, ctx, sources, backend_for(target_of(kernel, ctx))).run()
            for kernel in op.ops if isinstance(kernel, KernelOp)}
