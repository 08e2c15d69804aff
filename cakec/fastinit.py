"""xDSL's IRDL op builder, short-cut for ops whose every operand, result, region and successor
is exactly one (no optional or variadic definition, no segment options): most of Cake's IR.

`irdl_op_init` (what `Op(...)` and `Op.build(...)` run) checks each argument against its
definition through ABC `isinstance` tests (`Sequence`), builds every list twice and matches
the op's options: for an op of single arguments all of it gives back the arguments as they
came. It was a quarter of the IR build of the k-means example (2026-12-05, cProfile of
`Frontend.build`). `patch()`, run when `xdsl.irdl.operations` has been imported (cakec/
xdslhooks.py), puts a function in its place that builds such an op directly, as xDSL's own
builder ends: `Operation.__init__` with the arguments and the properties and attributes that
are not None. Anything else (an optional or variadic definition, an option, an argument of
another kind or count: a list, an `Operation` for its result, None, the wrong number) goes to
xDSL's builder, which builds it or raises its own error. The IR printed is the same
(test/unit/test_fastinit.py).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def patch(ops: ModuleType) -> None:
    """Give `xdsl.irdl.operations` (`ops`, just run) the short-cut builder (once)."""
    init = getattr(ops, "irdl_op_init", None)
    variadic = getattr(ops, "VariadicDef", None)
    if init is None or variadic is None or getattr(init, "_cake_fast", False):
        return
    from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

    #: id(op definition) → (the definition, whether its ops take the short cut)
    simple: dict[int, tuple[Any, bool]] = {}

    def is_simple(op_def: Any) -> bool:
        got = simple.get(id(op_def))
        if got is None:
            defs = [d for _, d in (*op_def.operands, *op_def.results, *op_def.regions,
                                   *op_def.successors)]
            got = simple[id(op_def)] = (op_def, not op_def.options and not any(
                isinstance(d, variadic) for d in defs))
        return got[1]

    def irdl_op_init(self: Any, op_def: Any, *, operands: Any, result_types: Any,
                     properties: Any, attributes: Any, successors: Any, regions: Any) -> None:
        if (is_simple(op_def) and len(operands) == len(op_def.operands)
                and len(result_types) == len(op_def.results)
                and len(regions) == len(op_def.regions)
                and len(successors) == len(op_def.successors)
                and all(isinstance(o, SSAValue) for o in operands)
                and all(isinstance(t, Attribute) for t in result_types)
                and all(isinstance(r, Region) for r in regions)
                and all(isinstance(b, Block) for b in successors)):
            Operation.__init__(
                self, operands=list(operands), result_types=list(result_types),
                properties={k: v for k, v in properties.items() if v is not None},
                attributes={k: v for k, v in attributes.items() if v is not None},
                successors=list(successors), regions=list(regions))
            return
        init(self, op_def, operands=operands, result_types=result_types,
             properties=properties, attributes=attributes, successors=successors,
             regions=regions)

    irdl_op_init._cake_fast = True  # type: ignore[attr-defined]
    irdl_op_init.xdsl = init  # type: ignore[attr-defined]  (xDSL's own, for the tests)
    ops.irdl_op_init = irdl_op_init
