"""xDSL's named accessors of an op's operands, results, regions and successors, short-cut.

xDSL's accessor of a single one before any variadic definition (`wait.barrier`, `mma.acc`;
`BeforeVariadicSingleAccessor.__get__`) asks `get_op_constructs` for the sequence (a
`match` on the kind; for operands a new `OpOperands` view of the op) and then its `index`
method for the element: three Python calls and an object per access, ~650 ns, where the
element is one index into a tuple the op holds. An op with optional or variadic
definitions reads its segment sizes first (`BaseAttrAccessor.__get__`): the property's
values unpacked from their bytes at every access, ~5 µs. The passes read the first kind
~600 times and the second ~100 times per verify of the GEMM example (2026-12-06).
`patch()`, run when `xdsl.irdl.operations` has been imported (cakec/xdslhooks.py), gives
both accessor classes a `__get__` that indexes the op's own tuple (`_operands`, `results`,
`regions`, `_successors`: what those views index) directly, the second with the segment
sizes unpacked once per attribute (attributes are immutable; `_segments`). Where xDSL's
layout differs (another version), the module is left as it is.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def patch(ops: ModuleType) -> None:
    """Give `xdsl.irdl.operations` (`ops`, just run) the short-cut accessor (once)."""
    accessor = getattr(ops, "BeforeVariadicSingleAccessor", None)
    sized = getattr(ops, "BaseAttrAccessor", None)
    kinds = getattr(ops, "VarIRConstruct", None)
    if accessor is None or sized is None or kinds is None or "__get__" in vars(accessor):
        return
    from xdsl.ir import Operation

    #: the construct → the op's tuple that xDSL's view of it indexes
    held = {kinds.OPERAND: "_operands", kinds.RESULT: "results", kinds.REGION: "regions",
            kinds.SUCCESSOR: "_successors"}
    if set(held) != set(kinds) or not all(
            name in Operation.__dataclass_fields__ for name in held.values()):
        return
    xdsl_get = accessor.__get__
    operand, result = kinds.OPERAND, kinds.RESULT

    def tuple_of(obj: Any, construct: Any) -> Any:
        # identity tests first: an Enum hashes through a Python method (`held`'s lookup)
        if construct is operand:
            return obj._operands
        if construct is result:
            return obj.results
        return getattr(obj, held[construct])

    def __get__(self: Any, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return xdsl_get(self, obj, objtype)
        return tuple_of(obj, self.construct)[self.idx]

    __get__.xdsl = xdsl_get  # type: ignore[attr-defined]  (xDSL's own, for the tests)
    accessor.__get__ = __get__
    xdsl_sized_get = sized.__get__

    def sized_get(self: Any, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return xdsl_sized_get(self, obj, objtype)
        option = self.option
        sizes = _segments(option.container(obj)[option.attribute_name])
        return self.index(sizes, tuple_of(obj, self.construct))

    sized_get.xdsl = xdsl_sized_get  # type: ignore[attr-defined]
    sized.__get__ = sized_get


#: id(segment sizes attribute) → (the attribute, its values): the attribute is kept, so its
#: id names no other object while the entry lives
_SEGMENTS: dict[int, tuple[Any, tuple[int, ...]]] = {}
_MAX_SEGMENTS = 4096


def _segments(attr: Any) -> tuple[int, ...]:
    """`attr.get_values()`, unpacked once per attribute."""
    got = _SEGMENTS.get(id(attr))
    if got is None or got[0] is not attr:
        if len(_SEGMENTS) >= _MAX_SEGMENTS:
            _SEGMENTS.clear()
        got = _SEGMENTS[id(attr)] = (attr, attr.get_values())
    return got[1]
