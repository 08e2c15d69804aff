"""Parsing .cake text into `cakec.ast`, with positioned syntax diagnostics (CAKE-P…).

Lark's LALR parser is built once per process and cached on disk (keyed by the grammar,
Lark and Python versions), so a fresh `cakec verify` pays a few milliseconds for it.
"""

from __future__ import annotations

import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterator

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.indenter import Indenter

from cakec import ast
from cakec.diagnostics import CompileError, Span, error

GRAMMAR = Path(__file__).with_name("grammar.lark")


class IndentationProblem(Exception):
    def __init__(self, line: int, col: int, message: str):
        super().__init__(message)
        self.line, self.col = line, col


class CakeIndenter(Indenter):
    NL_type = "_NL"
    OPEN_PAREN_types = ["LPAR", "LSQB", "LBRACE"]
    CLOSE_PAREN_types = ["RPAR", "RSQB", "RBRACE"]
    INDENT_type = "_INDENT"
    DEDENT_type = "_DEDENT"
    tab_len = 8

    def handle_NL(self, token: Token) -> Iterator[Token]:
        # Lark's own version raises a position-less DedentError; ours says where.
        if self.paren_level > 0:
            return
        yield token
        indent_str = token.rsplit("\n", 1)[1]
        indent = indent_str.count(" ") + indent_str.count("\t") * self.tab_len
        if indent > self.indent_level[-1]:
            self.indent_level.append(indent)
            yield Token.new_borrow_pos(self.INDENT_type, indent_str, token)
        else:
            while indent < self.indent_level[-1]:
                self.indent_level.pop()
                yield Token.new_borrow_pos(self.DEDENT_type, indent_str, token)
            if indent != self.indent_level[-1]:
                raise IndentationProblem(
                    token.end_line or 0, (token.end_column or 1),
                    f"unindent does not match any outer indentation level (column {indent + 1})")


def _cache_path() -> str:
    root = os.environ.get("CAKEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cakec")
    try:
        os.makedirs(root, exist_ok=True)
        return os.path.join(root, "grammar.lark.cache")
    except OSError:
        return os.path.join(tempfile.gettempdir(), "cakec-grammar.lark.cache")


@lru_cache(maxsize=1)
def parser() -> Lark:
    return Lark(GRAMMAR.read_text(), parser="lalr", postlex=CakeIndenter(),
                propagate_positions=True, maybe_placeholders=True, cache=_cache_path())


# ---- error messages ----------------------------------------------------------------------

_PRETTY = {
    "_NL": "newline", "_INDENT": "indent", "_DEDENT": "end of block", "$END": "end of file",
    "NAME": "name", "INT": "integer", "FLOAT": "number", "SIZE": "size literal",
    "STRING": "string", "COMP_OP": "comparison", "ADD_OP": "'+' or '-'",
    "MUL_OP": "'*', '/', '//' or '%'", "UNARY_OP": "'-'", "AUGOP": "'+='",
}


def _describe(term: str) -> str:
    if term in _PRETTY:
        return _PRETTY[term]
    try:
        pattern = parser().get_terminal(term).pattern
    except KeyError:
        return term.lower()
    if pattern.type == "str":
        return f"'{pattern.value}'"
    return term.lower()


def _expected(names: set[str]) -> str:
    items = sorted({_describe(n) for n in names})
    if len(items) > 8:
        items = items[:8] + ["..."]
    return ", ".join(items)


def _token_text(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    if tok.type in ("_NL",):
        return "newline"
    if tok.type == "_INDENT":
        return "indent"
    if tok.type == "_DEDENT":
        return "end of block"
    return f"'{tok.value}'"


def _syntax_error(exc: UnexpectedInput, path: str, text: str) -> CompileError:
    if isinstance(exc, UnexpectedCharacters):
        ch = text[exc.pos_in_stream] if exc.pos_in_stream < len(text) else "?"
        return error("CAKE-P002", f"invalid character {ch!r}",
                     Span(path, exc.line, exc.column, exc.line, exc.column + 1))
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        if tok.type in ("_INDENT", "_DEDENT", "_NL"):
            # Synthetic tokens borrow the previous newline's start; point at the new line.
            line, col = tok.end_line or exc.line, tok.end_column or exc.column
        else:
            line, col = tok.line, tok.column
        expected = exc.accepts or exc.expected
        if tok.type == "_INDENT":
            return error("CAKE-P003", "unexpected indent", Span(path, line, col),
                         help="indent only the body of a `def`, `with`, `for` or `if`")
        msg = f"unexpected {_token_text(tok)}; expected {_expected(set(expected))}"
        end = col + len(str(tok.value)) if tok.type not in ("$END", "_NL", "_DEDENT") else col + 1
        if tok.type == "$END":
            lines = text.splitlines() or [""]
            line, col, end = len(lines), len(lines[-1]) + 1, len(lines[-1]) + 2
        return error("CAKE-P001", msg, Span(path, line, col, line, end))
    if isinstance(exc, UnexpectedEOF):
        lines = text.splitlines() or [""]
        return error("CAKE-P001", "unexpected end of file", Span(path, len(lines), len(lines[-1]) + 1))
    return error("CAKE-P001", str(exc).splitlines()[0], Span(path, exc.line, exc.column))


def parse(text: str, path: str) -> ast.Module:
    """Parse a .cake file. Raises CompileError carrying the first syntax diagnostic."""
    if not text.endswith("\n"):
        text += "\n"
    try:
        tree = parser().parse(text)
    except IndentationProblem as exc:
        raise error("CAKE-P003", str(exc), Span(path, exc.line, exc.col)) from None
    except UnexpectedInput as exc:
        raise _syntax_error(exc, path, text) from None
    return _ToAst(path).transform(tree)


# ---- Lark tree → ast ---------------------------------------------------------------------


def _tok_span(path: str, tok: Token) -> Span:
    return Span(path, tok.line or 0, tok.column or 0, tok.end_line or 0, tok.end_column or 0)


@v_args(meta=True)
class _ToAst(Transformer):
    """Bottom-up conversion; every node gets the span Lark propagated."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def _span(self, meta) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.path, 0, 0)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    # statements
    def start(self, meta, items):
        return ast.Module(self._span(meta), tuple(i for i in items if isinstance(i, ast.Node)))

    def simple_stmt(self, meta, items):
        return items[0]

    def assign(self, meta, items):
        targets, value = items
        return ast.Assign(self._span(meta), targets, value)

    def aug_assign(self, meta, items):
        targets, op, value = items
        return ast.Assign(self._span(meta), targets, value, aug_op=str(op)[:-1])

    def target_name(self, meta, items):
        return (ast.Name(_tok_span(self.path, items[0]), str(items[0])),)

    def target_tuple(self, meta, items):
        return tuple(ast.Name(_tok_span(self.path, t), str(t)) for t in items if t is not None)

    def expr_stmt(self, meta, items):
        return ast.ExprStmt(self._span(meta), items[0])

    def pass_stmt(self, meta, items):
        return ast.Pass(self._span(meta))

    def suite(self, meta, items):
        return tuple(items)

    def with_stmt(self, meta, items):
        return ast.With(self._span(meta), items[0], items[1])

    def for_stmt(self, meta, items):
        var, it, body = items
        return ast.For(self._span(meta), ast.Name(_tok_span(self.path, var), str(var)), it, body)

    def if_stmt(self, meta, items):
        cond, body, *rest = items
        elifs = [r for r in rest if isinstance(r, tuple) and len(r) == 3 and r[0] == "elif"]
        orelse = rest[-1] if rest and rest[-1] is not None and not (
            isinstance(rest[-1], tuple) and len(rest[-1]) == 3 and rest[-1][0] == "elif") else ()
        # Fold `elif` chains into nested ifs, innermost last.
        for _, econd, ebody, espan in reversed([(e[0], e[1], e[2][0], e[2][1]) for e in elifs]):
            orelse = (ast.If(espan, econd, ebody, orelse),)
        return ast.If(self._span(meta), cond, body, orelse)

    def elif_clause(self, meta, items):
        return ("elif", items[0], (items[1], self._span(meta)))

    def else_clause(self, meta, items):
        return items[0]

    def dotted_name(self, meta, items):
        return tuple(str(t) for t in items)

    def call_args(self, meta, items):
        return items[0] if items and items[0] is not None else ((), ())

    def decorator(self, meta, items):
        name, args = items
        pos, kws = args if args is not None else ((), ())
        return ast.Decorator(self._span(meta), name, pos, kws)

    def param(self, meta, items):
        name, ann = items
        ann_span = None
        if ann is not None:
            ann_span = Span(self.path, name.line, name.end_column + 3)  # after "NAME: "
        return ast.Param(_tok_span(self.path, name), str(name), ann, ann_span)

    def params(self, meta, items):
        return tuple(i for i in items if i is not None)

    def funcdef(self, meta, items):
        *decos, name, params, body = items
        return ast.FuncDef(self._span(meta), str(name), _tok_span(self.path, name), tuple(decos),
                           params or (), body)

    # expressions
    def name(self, meta, items):
        return ast.Name(self._span(meta), str(items[0]))

    def int_lit(self, meta, items):
        return ast.IntLit(self._span(meta), int(str(items[0]).replace("_", ""), 0))

    def float_lit(self, meta, items):
        return ast.FloatLit(self._span(meta), float(items[0]))

    def size_lit(self, meta, items):
        return ast.SizeLit(self._span(meta), int(str(items[0])[:-1]), str(items[0]))

    def str_lit(self, meta, items):
        return ast.StrLit(self._span(meta), str(items[0])[1:-1])

    def true_lit(self, meta, items):
        return ast.BoolLit(self._span(meta), True)

    def false_lit(self, meta, items):
        return ast.BoolLit(self._span(meta), False)

    def none_lit(self, meta, items):
        return ast.NoneLit(self._span(meta))

    def paren(self, meta, items):
        return items[0]

    def tuple_lit(self, meta, items):
        return ast.TupleLit(self._span(meta), tuple(i for i in items if i is not None))

    def list_lit(self, meta, items):
        return ast.ListLit(self._span(meta), tuple(i for i in items if i is not None))

    def arglist(self, meta, items):
        pos = tuple(i for i in items if i is not None and not isinstance(i, ast.Keyword))
        kws = tuple(i for i in items if isinstance(i, ast.Keyword))
        return pos, kws

    def kwarg(self, meta, items):
        return ast.Keyword(self._span(meta), str(items[0]), items[1])

    def call(self, meta, items):
        func, args = items
        pos, kws = args if args is not None else ((), ())
        return ast.Call(self._span(meta), func, pos, kws)

    def subscripts(self, meta, items):
        return tuple(i for i in items if i is not None)

    def slice(self, meta, items):
        return ast.Slice(self._span(meta), items[0], items[1])

    def subscript(self, meta, items):
        return ast.Subscript(self._span(meta), items[0], items[1])

    def attribute(self, meta, items):
        return ast.Attribute(self._span(meta), items[0], str(items[1]))

    def _fold(self, meta, items) -> ast.Expr:
        left = items[0]
        for op, right in zip(items[1::2], items[2::2]):
            span = Span(self.path, left.span.line, left.span.col, right.span.end_line,
                        right.span.end_col)
            left = ast.BinOp(span, str(op), left, right)
        return left

    binop = _fold

    def comparison(self, meta, items):
        return self._fold(meta, [i for i in items if i is not None])

    def power(self, meta, items):
        if len(items) == 1:
            return items[0]
        base, exp = items
        return ast.BinOp(self._span(meta), "**", base, exp)

    def unary(self, meta, items):
        return ast.UnaryOp(self._span(meta), str(items[0]), items[1])

    def not_test(self, meta, items):
        return ast.UnaryOp(self._span(meta), "not", items[0])

    def _logic(self, op: str, meta, items):
        left = items[0]
        for right in items[1:]:
            left = ast.BinOp(self._span(meta), op, left, right)
        return left

    def or_test(self, meta, items):
        return self._logic("or", meta, items)

    def and_test(self, meta, items):
        return self._logic("and", meta, items)

    def ifexp(self, meta, items):
        then, cond, orelse = items
        return ast.IfExp(self._span(meta), cond, then, orelse)

