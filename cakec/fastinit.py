"""xDSL's IRDL op builder, short-cut for ops whose every result, region and successor is exactly
one and whose operands are single, optional or variadic (with, for several of the latter,
their segment sizes as the one option): all of Cake's IR.

`irdl_op_init` (what `Op(...)` and `Op.build(...)` run) checks each argument against its
definition through ABC `isinstance` tests (`Sequence`), builds every list twice, matches
the op's options and makes the operand segment sizes afresh (a `DenseArrayBase`, ~19 µs to
build and verify): for these ops all of it gives back the arguments as they came, flattened,
and one segment-sizes value per distinct list of sizes. It was a quarter of the IR build of
the k-means example (2026-12-05, cProfile of `Frontend.build`). `patch()`, run when
`xdsl.irdl.operations` has been imported (cakec/xdslhooks.py), puts a function in its place
that builds such an op directly, as xDSL's own builder ends: `Operation.__init__` with the
flattened operands, the properties and attributes that are not None, and the segment sizes
where the op keeps them. Anything else (another option, a variadic result, region or
successor, an argument of another kind or count: an `Operation` for its result, a list for
a single operand, None for a required one, the wrong number) goes to xDSL's builder, which
builds it or raises its own error. The IR printed is the same (test/unit/test_fastinit.py).

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

    optional, segmented = ops.OptionalDef, ops.AttrSizedOperandSegments
    #: id(op definition) → (the definition, its plan: None for xDSL's builder, else per
    #: operand definition whether it is single, optional or variadic, and the name of the
    #: container of its segment sizes, "" where the op keeps none)
    plans: dict[int, tuple[Any, tuple[tuple[int, ...], str] | None]] = {}

    def plan_of(op_def: Any) -> tuple[tuple[int, ...], str] | None:
        got = plans.get(id(op_def))
        if got is None:
            got = plans[id(op_def)] = (op_def, _plan(op_def))
        return got[1]

    def _plan(op_def: Any) -> tuple[tuple[int, ...], str] | None:
        if any(isinstance(d, variadic) for _, d in (*op_def.results, *op_def.regions,
                                                    *op_def.successors)):
            return None
        kinds = tuple(_OPTIONAL if isinstance(d, optional) else
                      _VARIADIC if isinstance(d, variadic) else _SINGLE
                      for _, d in op_def.operands)
        if not op_def.options:
            return (kinds, "") if kinds.count(_SINGLE) >= len(kinds) - 1 else None
        if len(op_def.options) != 1 or type(op_def.options[0]) is not segmented:
            return None
        return kinds, "properties" if op_def.options[0].as_property else "attributes"

    def flattened(kinds: tuple[int, ...], operands: Any) -> tuple[list, list[int]] | None:
        """The operands as one list and the size of each definition's share, or None for
        what xDSL's builder decides."""
        flat: list[Any] = []
        sizes: list[int] = []
        for kind, arg in zip(kinds, operands):
            if kind == _SINGLE:
                if not isinstance(arg, SSAValue):
                    return None
                flat.append(arg)
                sizes.append(1)
            elif arg is None and kind == _OPTIONAL:
                sizes.append(0)
            elif (type(arg) in (list, tuple) and all(isinstance(o, SSAValue) for o in arg)
                  and (kind == _VARIADIC or len(arg) <= 1)):
                flat += arg
                sizes.append(len(arg))
            else:
                return None
        return flat, sizes

    def irdl_op_init(self: Any, op_def: Any, *, operands: Any, result_types: Any,
                     properties: Any, attributes: Any, successors: Any, regions: Any) -> None:
        plan = plan_of(op_def)
        if (plan is not None and len(operands) == len(op_def.operands)
                and len(result_types) == len(op_def.results)
                and len(regions) == len(op_def.regions)
                and len(successors) == len(op_def.successors)
                and all(isinstance(t, Attribute) for t in result_types)
                and all(isinstance(r, Region) for r in regions)
                and all(isinstance(b, Block) for b in successors)):
            kinds, container = plan
            built = flattened(kinds, operands)
            if built is not None:
                props = {k: v for k, v in properties.items() if v is not None}
                attrs = {k: v for k, v in attributes.items() if v is not None}
                if container:
                    (props if container == "properties" else attrs)[
                        segmented.attribute_name] = _segment_sizes(tuple(built[1]))
                Operation.__init__(
                    self, operands=built[0], result_types=list(result_types),
                    properties=props, attributes=attrs, successors=list(successors),
                    regions=list(regions))
                return
        init(self, op_def, operands=operands, result_types=result_types,
             properties=properties, attributes=attributes, successors=successors,
             regions=regions)

    irdl_op_init._cake_fast = True  # type: ignore[attr-defined]
    irdl_op_init.xdsl = init  # type: ignore[attr-defined]  (xDSL's own, for the tests)
    ops.irdl_op_init = irdl_op_init


#: The kinds of operand definition
_SINGLE, _OPTIONAL, _VARIADIC = 0, 1, 2

#: sizes → the segment-sizes attribute of those sizes (an immutable value), bounded
_SEGMENTS: dict[tuple[int, ...], Any] = {}


def _segment_sizes(sizes: tuple[int, ...]) -> Any:
    """`DenseArrayBase.from_list(i32, sizes)`, as xDSL's builder makes it, once per sizes."""
    got = _SEGMENTS.get(sizes)
    if got is None:
        from xdsl.dialects.builtin import DenseArrayBase, i32  # imports this module

        if len(_SEGMENTS) >= 4096:
            _SEGMENTS.clear()
        got = _SEGMENTS[sizes] = DenseArrayBase.from_list(i32, list(sizes))
    return got


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
