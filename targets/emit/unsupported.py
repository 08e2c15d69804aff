"""How a lowering says it cannot emit correct code: the `Unsupported` exception, reported by
the emitter as CAKE-H100 at the op, and the diagnostic codes of the emitter's own range."""

from __future__ import annotations

#: Code for lowerings a target does not have yet (the emitter's range of CAKE-H).
UNSUPPORTED = "CAKE-H100"
#: The help of a CAKE-H100 whose lowering names no specific fix.
NOT_LOWERED_HELP = ("docs/codegen.md (\"Not lowered yet\") lists what each target lowers: "
                    "write the construct in a lowered form, or choose a target that lowers it")
#: A derived attribute the emitter needs is absent or malformed: a pass contract is broken.
MISSING = "CAKE-I002"


#: The help of a CAKE-H100 whose lowering names no specific fix.
NOT_LOWERED_HELP = ("docs/codegen.md (\"Not lowered yet\") lists what each target lowers: "
                    "write the construct in a lowered form, or choose a target that lowers it")


class Unsupported(Exception):
    """Raised by a lowering that cannot emit correct code for this op on this target."""


class Cascade(Exception):
    """Raised where an op reads what an op refused before it defines: reported once, there."""
