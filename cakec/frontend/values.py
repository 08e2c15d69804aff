"""What an expression denotes while the IR is built (`Value`): a constant, an SSA value of
some kind, or a namespace/builtin reference; and how a value is named in diagnostics."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import SSAValue

from cakec.diagnostics import Note, Span
from cakec.frontend.builtins import KIND_NAMES


@dataclass
class Value:
    """What an expression denotes while building: a constant, an SSA value of some kind,
    or a namespace/builtin reference."""

    kind: str
    span: Span
    const: Any = None  # Python value for constants (int/float/bool/str/tuple)
    ssa: SSAValue | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def is_const(self) -> bool:
        return self.ssa is None and self.kind in ("int", "float", "bool")


def describe(v: Value) -> str:
    names = {"range": "an lm.range(...)", "lm": "the lm namespace", "builtin": "a builtin",
             "tuple": "a tuple", "str": "a string", "none": "None", "shape_of": "a tensor shape",
             "size": "a size literal", "stage_t": "a transposed view stage (view[s].T)"}
    if v.kind == "int" and v.ssa is not None:
        return "a runtime integer"
    if v.kind == "bool" and v.ssa is not None:
        return "a runtime boolean"
    return names.get(v.kind) or KIND_NAMES.get(v.kind, v.kind)


def decl_note(v: Value) -> list[Note]:
    if "name" in v.info and v.kind not in ("int", "bool"):
        return [Note(v.span, f"`{v.info['name']}` is {describe(v)}, declared here")]
    return []
