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

`Operation.__init__` itself, under every op built (IRDL or `Op.create`), is short-cut too
(`patch_operation`): xDSL's assigns the operands and successors through their property
setters, which first detach the uses of the operands and successors an op being built does
not have yet, and imports its default location at each call; a sixth of the IR build
(2026-12-06). Its replacement sets the same fields to the same values in one pass. And
`Block._attach_op`, under every op added to a block, asks whether the op is an ancestor of
the block (a walk up to the module) only for an op with regions: one without has no
descendants.
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


#: The fields `Operation.__init__` sets (xDSL 0.75's layout): another layout keeps xDSL's own.
_OPERATION_FIELDS = ("_operands", "_operand_uses", "results", "properties", "attributes",
                     "location", "_successors", "_successor_uses", "regions")


def patch_operation(core: ModuleType) -> None:
    """Give `xdsl.ir.core.Operation` (`core`) the short-cut `__init__` (once)."""
    op_class = getattr(core, "Operation", None)
    fields = getattr(op_class, "__dataclass_fields__", {})
    if op_class is None or getattr(op_class.__init__, "_cake_fast", False) or not all(
            name in fields for name in _OPERATION_FIELDS):
        return
    xdsl_init = op_class.__init__
    ssa_values, use, op_result = core.SSAValues, core.Use, core.OpResult
    #: builtin's UNKNOWN_LOC, read when the first op is built (builtin is still being
    #: imported when this runs)
    unknown_loc: list[Any] = []

    def __init__(self: Any, *, operands: Any = (), result_types: Any = (),
                 properties: Any = {}, attributes: Any = {}, location: Any = None,
                 successors: Any = (), regions: Any = ()) -> None:
        operands = ssa_values(operands)
        uses = tuple([use(self, i) for i in range(len(operands))])
        for operand, u in zip(operands, uses):
            operand.add_use(u)
        self._operands, self._operand_uses = operands, uses
        self.results = ssa_values([op_result(t, self, i) for i, t in enumerate(result_types)])
        self.properties = dict(properties)
        self.attributes = dict(attributes)
        if location is None:
            if not unknown_loc:
                unknown_loc.append(core._unknown_loc())
            location = unknown_loc[0]
        self.location = location
        if successors:
            self.successors = list(successors)  # xDSL's setter: the blocks' uses
        else:
            self._successors, self._successor_uses = (), ()
        self.regions = ()
        for region in regions:
            self.add_region(region)
        self.__post_init__()

    __init__._cake_fast = True  # type: ignore[attr-defined]
    __init__.xdsl = xdsl_init  # type: ignore[attr-defined]  (xDSL's own, for the tests)
    op_class.__init__ = __init__
    block_class = getattr(core, "Block", None)
    xdsl_attach = getattr(block_class, "_attach_op", None)
    if xdsl_attach is None:
        return

    def _attach_op(self: Any, operation: Any) -> None:
        if operation.regions:
            xdsl_attach(self, operation)
            return
        if operation.parent:
            raise ValueError("Can't add to a block an operation already attached to a block.")
        operation.parent = self

    _attach_op.xdsl = xdsl_attach  # type: ignore[attr-defined]  (xDSL's own, for the tests)
    block_class._attach_op = _attach_op
