"""The .cake syntax tree: small frozen dataclasses, each with the span it came from.

The parser (`cakec.frontend.parser`) builds these from the Lark tree; the frontend gives them
meaning. Keeping a typed tree between the two keeps Lark details out of the semantics.
"""

from __future__ import annotations

from dataclasses import dataclass

from cakec.diagnostics import Span


@dataclass(frozen=True)
class Node:
    span: Span


# ---- expressions -------------------------------------------------------------------------

@dataclass(frozen=True)
class Name(Node):
    id: str


@dataclass(frozen=True)
class IntLit(Node):
    value: int


@dataclass(frozen=True)
class FloatLit(Node):
    value: float


@dataclass(frozen=True)
class SizeLit(Node):
    """`128b`: a byte-size literal, used for swizzle spans."""

    value: int
    text: str


@dataclass(frozen=True)
class StrLit(Node):
    value: str


@dataclass(frozen=True)
class BoolLit(Node):
    value: bool


@dataclass(frozen=True)
class NoneLit(Node):
    pass


@dataclass(frozen=True)
class TupleLit(Node):
    items: tuple["Expr", ...]


@dataclass(frozen=True)
class ListLit(Node):
    items: tuple["Expr", ...]


@dataclass(frozen=True)
class Attribute(Node):
    value: "Expr"
    attr: str


@dataclass(frozen=True)
class Keyword(Node):
    name: str
    value: "Expr"


@dataclass(frozen=True)
class Call(Node):
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[Keyword, ...]


@dataclass(frozen=True)
class Slice(Node):
    lower: "Expr | None"
    upper: "Expr | None"


@dataclass(frozen=True)
class Subscript(Node):
    value: "Expr"
    index: tuple["Expr | Slice", ...]


@dataclass(frozen=True)
class BinOp(Node):
    op: str  # + - * / // % ** == != < <= > >= and or
    left: "Expr"
    right: "Expr"


@dataclass(frozen=True)
class UnaryOp(Node):
    op: str  # - + not
    operand: "Expr"


@dataclass(frozen=True)
class IfExp(Node):
    cond: "Expr"
    then: "Expr"
    orelse: "Expr"


Expr = (Name | IntLit | FloatLit | SizeLit | StrLit | BoolLit | NoneLit | TupleLit | ListLit
        | Attribute | Call | Subscript | BinOp | UnaryOp | IfExp)

# ---- statements --------------------------------------------------------------------------


@dataclass(frozen=True)
class Assign(Node):
    targets: tuple[Name, ...]  # one name, or a tuple unpacking
    value: Expr
    aug_op: str | None = None  # "+" for `x += e`


@dataclass(frozen=True)
class ExprStmt(Node):
    value: Expr


@dataclass(frozen=True)
class Pass(Node):
    pass


@dataclass(frozen=True)
class With(Node):
    context: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class For(Node):
    var: Name
    iter: Expr
    body: tuple["Stmt", ...]


@dataclass(frozen=True)
class If(Node):
    cond: Expr
    body: tuple["Stmt", ...]
    orelse: tuple["Stmt", ...]


@dataclass(frozen=True)
class Param(Node):
    name: str
    annotation: tuple[str, ...] | None  # dotted name, e.g. ("LM", "tma3d")
    annotation_span: Span | None


@dataclass(frozen=True)
class Decorator(Node):
    name: tuple[str, ...]
    args: tuple[Expr, ...]
    kwargs: tuple[Keyword, ...]


@dataclass(frozen=True)
class FuncDef(Node):
    name: str
    name_span: Span
    decorators: tuple[Decorator, ...]
    params: tuple[Param, ...]
    body: tuple["Stmt", ...]


Stmt = Assign | ExprStmt | Pass | With | For | If | FuncDef


@dataclass(frozen=True)
class Module(Node):
    body: tuple[Stmt, ...]
