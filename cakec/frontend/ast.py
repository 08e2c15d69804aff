"""The .cake syntax tree: small dataclasses, each with the span it came from.

The parser (`cakec.frontend.parser`) builds these from the Lark tree; the frontend gives them
meaning. Keeping a typed tree between the two keeps Lark details out of the semantics.

Nodes are values: nothing changes one after the parser made it, and they compare and hash
by their fields. They are not `frozen` dataclasses only because a frozen dataclass's
`__init__` sets each field through `object.__setattr__`, three times the time of a plain
one, and the parser makes some 400 nodes per GEMM example (2026-12-06); `slots` leaves each
node without an attribute dict.
"""

from __future__ import annotations

from dataclasses import dataclass

from cakec.diagnostics import Span

#: The dataclass options of every node (see the module docstring)
_node = dataclass(unsafe_hash=True, slots=True)


@_node
class Node:
    span: Span


# ---- expressions -------------------------------------------------------------------------

@_node
class Name(Node):
    id: str


@_node
class IntLit(Node):
    value: int


@_node
class FloatLit(Node):
    value: float


@_node
class SizeLit(Node):
    """`128b`: a byte-size literal, used for swizzle spans."""

    value: int
    text: str


@_node
class StrLit(Node):
    value: str


@_node
class BoolLit(Node):
    value: bool


@_node
class NoneLit(Node):
    pass


@_node
class TupleLit(Node):
    items: tuple["Expr", ...]


@_node
class ListLit(Node):
    items: tuple["Expr", ...]


@_node
class Attribute(Node):
    value: "Expr"
    attr: str


@_node
class Keyword(Node):
    name: str
    value: "Expr"


@_node
class Call(Node):
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[Keyword, ...]


@_node
class Slice(Node):
    lower: "Expr | None"
    upper: "Expr | None"


@_node
class Subscript(Node):
    value: "Expr"
    index: tuple["Expr | Slice", ...]


@_node
class BinOp(Node):
    op: str  # + - * / // % ** == != < <= > >= and or
    left: "Expr"
    right: "Expr"


@_node
class UnaryOp(Node):
    op: str  # - + not
    operand: "Expr"


@_node
class IfExp(Node):
    cond: "Expr"
    then: "Expr"
    orelse: "Expr"


Expr = (Name | IntLit | FloatLit | SizeLit | StrLit | BoolLit | NoneLit | TupleLit | ListLit
        | Attribute | Call | Subscript | BinOp | UnaryOp | IfExp)

# ---- statements --------------------------------------------------------------------------


@_node
class Assign(Node):
    targets: tuple[Name, ...]  # one name, or a tuple unpacking
    value: Expr
    aug_op: str | None = None  # "+" for `x += e`


@_node
class ExprStmt(Node):
    value: Expr


@_node
class Pass(Node):
    pass


@_node
class With(Node):
    context: Expr
    body: tuple["Stmt", ...]


@_node
class For(Node):
    var: Name
    iter: Expr
    body: tuple["Stmt", ...]


@_node
class If(Node):
    cond: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@_node
class Param(Node):
    name: str
    annotation: tuple[str, ...] | None  # dotted name, e.g. ("LM", "tma3d")
    annotation_span: Span | None


@_node
class Decorator(Node):
    name: tuple[str, ...]
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...]


@_node
class FuncDef(Node):
    name: str
    name_span: Span
    decorators: tuple[Decorator, ...]
    params: tuple[Param, ...]
    body: tuple["Stmt", ...]


Stmt = Assign | ExprStmt | Pass | With | For | If | FuncDef


@_node
class Module(Node):
    body: tuple[Stmt, ...]
