"""`derive-barriers`: the mbarrier facts the author never writes.

On every `cake.barrier`: its offset in barrier storage (8 B per element, in declaration order),
hardware arrivals and transaction bytes per phase, and whether its consumers' first wait
passes (an "empty" barrier). On every `cake.wait`: the parity it waits on, per dynamic
instance when the loops around it have static trip counts, else a closed form or "tracked at
run time" (the emitter then tracks one phase bit per element, starting from
`cake.initial_parity`). On the kernel: the bytes of barrier storage. docs/ir.md is the
contract; passes/protocol/ holds the model that `verify-safety` checks with the same facts.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, i1
from xdsl.passes import ModulePass

from cakec.dialects import cake
from cakec.interned import i64_array, integer_attr, string_attr
from cakec.passes.base import target_of
from cakec.passes.derive_common import walk
from cakec.passes.protocol.accounting import accounting_of, first_wait_free
from cakec.passes.protocol.model import Kernel
from cakec.passes.protocol.parity import parities
from cakec.passes.protocol.trace import Exploration, model_of

MBARRIER_BYTES = 8


@dataclass(frozen=True)
class DeriveBarriers(ModulePass):
    name = "derive-barriers"
    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.ops:
            if isinstance(kernel, cake.KernelOp):
                _derive(*model_of(ctx, kernel), target_of(kernel, ctx, self.target))


def _derive(k: Kernel, ex: Exploration, target: str) -> None:
    kernel = k.op
    fwf = first_wait_free(k)
    # Every explored trip count contributes the completion patterns it shows.
    acct = accounting_of(k, ex, target)
    for b, free, arrivals, tx in zip(k.barriers, fwf, acct.arrivals, acct.tx_bytes):
        attrs = b.op.attributes
        attrs["cake.smem_offset"] = integer_attr(MBARRIER_BYTES * b.base)
        attrs["cake.arrivals"] = integer_attr(arrivals)
        attrs["cake.tx_bytes"] = integer_attr(tx)
        attrs["cake.first_wait_free"] = integer_attr(int(free), i1)
    for wait, parity in parities(k, fwf).items():
        free = fwf[k.barriers.index(k.barrier_of(wait.operands[0]))]
        wait.attributes["cake.parity"] = (string_attr(parity) if isinstance(parity, str)
                                          else i64_array(parity))
        wait.attributes["cake.initial_parity"] = integer_attr(int(free))
    for skip in (o for o in walk(kernel) if isinstance(o, cake.SkipOp)):
        # A skip flips the same phase bits as the role's waits: it starts them when it
        # comes first.
        free = fwf[k.barriers.index(k.barrier_of(skip.barrier))]
        skip.attributes["cake.initial_parity"] = integer_attr(int(free))
    kernel.attributes["cake.barrier_smem"] = integer_attr(MBARRIER_BYTES * k.total_elems)
