"""A tiny, safe evaluator for the integer expressions in kernel metadata.

Grid sizes ("cdiv(M, 128)", "min(cdiv(M, 128) * cdiv(N, 256), sm_count)") and shape
constraints ("K % 8 == 0") are parsed with `ast` and walked over a whitelist of node
types; nothing reaches eval(). Only ints flow through: `//` and `%` floor like Python.
"""

from __future__ import annotations

import ast
import operator
from functools import lru_cache
from typing import Callable, Mapping

_BINOPS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}
_CMPOPS: dict[type, Callable[[int, int], bool]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt,
    ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


_FUNCS: dict[str, tuple[Callable[..., int], int | None]] = {
    "cdiv": (_cdiv, 2), "min": (min, None), "max": (max, None),
}


class ExprError(ValueError):
    """An expression is malformed, names an unknown variable, or divides by zero."""


@lru_cache(maxsize=256)
def parse(text: str) -> ast.Expression:
    """Parse and whitelist-check once; raises ExprError naming the offending construct."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as e:
        raise ExprError(f"cannot parse expression {text!r}: {e.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.operator, ast.unaryop, ast.cmpop, ast.boolop,
                             ast.expr_context, ast.Expression)):
            continue  # judged with the node that applies them
        if isinstance(node, ast.Constant):
            ok = type(node.value) is int
        elif isinstance(node, ast.Call):
            ok = (isinstance(node.func, ast.Name) and node.func.id in _FUNCS
                  and not node.keywords)
        elif isinstance(node, ast.BinOp):
            ok = type(node.op) in _BINOPS
        elif isinstance(node, ast.Compare):
            ok = all(type(op) in _CMPOPS for op in node.ops)
        else:
            ok = isinstance(node, (ast.Name, ast.UnaryOp, ast.BoolOp))
        if not ok:
            raise ExprError(f"{text!r}: {ast.unparse(node)!r} is not allowed (integers, names, "
                            "+ - * // %, comparisons, and/or/not, cdiv, min, max)")
    return tree


def names(text: str) -> set[str]:
    """Variables an expression reads (function names excluded)."""
    tree = parse(text)
    funcs = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in funcs}


def evaluate(text: str, env: Mapping[str, int]) -> int:
    """Value of `text` with variables from `env` (comparisons give 0/1)."""
    return int(_eval(parse(text).body, env, text))


def _eval(node: ast.AST, env: Mapping[str, int], text: str) -> int:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExprError(f"{text!r}: unknown name {node.id!r}")
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, text)
        return {ast.USub: -v, ast.UAdd: v, ast.Not: int(not v)}[type(node.op)]
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env, text), _eval(node.right, env, text)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ExprError(f"{text!r}: division by zero")
        return _BINOPS[type(node.op)](a, b)
    if isinstance(node, ast.Compare):
        left = _eval(node.left, env, text)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, env, text)
            if not _CMPOPS[type(op)](left, right):
                return 0
            left = right
        return 1
    if isinstance(node, ast.BoolOp):
        want = isinstance(node.op, ast.Or)
        for v in node.values:
            if bool(_eval(v, env, text)) == want:
                return int(want)
        return int(not want)
    if isinstance(node, ast.Call):
        fn, arity = _FUNCS[node.func.id]
        args = [_eval(a, env, text) for a in node.args]
        if (arity is not None and len(args) != arity) or not args:
            raise ExprError(f"{text!r}: {node.func.id} takes "
                            f"{arity if arity is not None else 'at least 1'} arguments")
        if fn is _cdiv and args[1] == 0:
            raise ExprError(f"{text!r}: division by zero")
        return fn(*args)
    raise ExprError(f"{text!r}: unsupported node {type(node).__name__}")  # parse() forbids it
