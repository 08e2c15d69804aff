"""Scalar expressions of the barrier protocol model: SSA integers compiled to closures.

`Exprs` turns an SSA scalar (arith ops, loop variables, kernel parameters, block ids, dims,
the SM count) into an `ExprInfo`: a closure `env -> int | None` over an environment of loop
variables and the values of a launch (launch.py), a structural key (the same expression
written twice shares it), whether it depends on a runtime value or a loop variable, a
conservative value interval, the author's text for it and the operands it is built from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cakec.dialects import cake

I32_MIN, I32_MAX = -(2**31), 2**31 - 1

Env = dict
Expr = Callable[[Env], "int | None"]


@dataclass
class ExprInfo:
    fn: Expr
    key: tuple
    runtime: bool  # depends on kernel parameters, block ids, dims or the SM count
    ivdep: bool  # depends on a loop variable
    lo: int
    hi: int
    text: str
    parts: tuple["ExprInfo", ...] = ()  # the operands it is computed from

    def bases(self) -> Iterator["ExprInfo"]:
        """The maximal runtime sub-expressions that no loop variable feeds."""
        if self.runtime and not self.ivdep:
            yield self
        elif self.runtime:
            for p in self.parts:
                yield from p.bases()


def _c_rem(a: int, b: int) -> int | None:
    if b == 0:
        return None
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _floordiv(a: int, b: int) -> int | None:
    return None if b == 0 else a // b


def ceildiv(a: int, b: int) -> int | None:
    return None if b == 0 else -(-a // b)


_BINARY: dict[type, tuple[str, Callable[[int, int], int | None]]] = {
    arith.AddiOp: ("+", lambda a, b: a + b),
    arith.SubiOp: ("-", lambda a, b: a - b),
    arith.MuliOp: ("*", lambda a, b: a * b),
    arith.FloorDivSIOp: ("//", _floordiv),
    arith.RemSIOp: ("%", _c_rem),  # remsi truncates, as the hardware does
    arith.CeilDivSIOp: ("lm.cdiv", ceildiv),
    arith.MinSIOp: ("lm.min", min),
    arith.MaxSIOp: ("lm.max", max),
    arith.AndIOp: ("and", lambda a, b: a & b),
    arith.OrIOp: ("or", lambda a, b: a | b),
    arith.XOrIOp: ("^", lambda a, b: a ^ b),
}
_CMP = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]
_CMP_FN: list[Callable[[int, int], bool]] = [
    lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a < b, lambda a, b: a <= b,
    lambda a, b: a > b, lambda a, b: a >= b] * 2
# Runtime leaves: value range and the value used when no symbol pins them.
_LEAVES: dict[type, tuple[str, int, int, int]] = {
    cake.BlockIdOp: ("lm.block_id", 0, I32_MAX, 0),
    cake.NumBlocksOp: ("lm.num_blocks", 1, I32_MAX, 1),
    cake.SmCountOp: ("lm.sm_count", 1, 1024, 1),
}


def _interval(name: str, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """Value range of a binary node from its operands' ranges (conservative)."""
    (alo, ahi), (blo, bhi) = a, b
    if name == "+":
        return alo + blo, ahi + bhi
    if name == "-":
        return alo - bhi, ahi - blo
    if name == "*":
        ps = (alo * blo, alo * bhi, ahi * blo, ahi * bhi)
        return min(ps), max(ps)
    if name in ("//", "lm.cdiv") and blo == bhi and blo > 0:
        f = _floordiv if name == "//" else ceildiv
        return f(alo, blo) or 0, f(ahi, blo) or 0
    if name == "%" and blo == bhi and blo > 0:
        return (0 if alo >= 0 else -(blo - 1)), blo - 1
    if name == "lm.min":
        return min(alo, blo), min(ahi, bhi)
    if name == "lm.max":
        return max(alo, blo), max(ahi, bhi)
    return I32_MIN, I32_MAX


class Exprs:
    """Compiles SSA scalars to closures `env -> int | None` (None: not computable)."""

    def __init__(self) -> None:
        self.memo: dict[SSAValue, ExprInfo] = {}

    def __call__(self, v: SSAValue) -> ExprInfo:
        info = self.memo.get(v)
        if info is None:
            info = self._build(v)
            self.memo[v] = info
        return info

    def _build(self, v: SSAValue) -> ExprInfo:
        if isinstance(v, BlockArgument):
            return self._block_arg(v)
        op = v.owner
        assert isinstance(op, Operation)
        if isinstance(op, arith.ConstantOp):
            c = op.value.value.data if hasattr(op.value, "value") else 0
            c = int(c)
            return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c))
        if type(op) in _LEAVES:
            label, lo, hi, default = _LEAVES[type(op)]
            dim_attr = op.properties.get("dim")
            dim = "" if dim_attr is None else str(dim_attr.value.data)
            key = (label, dim)
            text = v.name_hint or f"{label}({dim})"
            return self._runtime(key, lambda env, d=default: d, lo, hi, text)
        if isinstance(op, cake.DimOp):
            t = self(op.tensor)
            idx = op.index.value.data
            key = ("dim", t.key, idx)
            return self._runtime(key, lambda env: 1, 0, I32_MAX,
                                 v.name_hint or f"{t.text}.shape[{idx}]")
        if type(op) in _BINARY:
            return self._binary(v, op)
        if isinstance(op, arith.CmpiOp):
            return self._cmp(v, op)
        if isinstance(op, arith.SelectOp):
            return self._select(v, op)
        return ExprInfo(lambda env: None, ("?", id(op)), True, False, I32_MIN, I32_MAX,
                        v.name_hint or "?")

    def _block_arg(self, v: BlockArgument) -> ExprInfo:
        parent = v.owner.parent_op() if isinstance(v.owner, Block) else None
        if isinstance(parent, cake.ForOp):
            # Loop variables live in the environment under their id: hashing an SSA value
            # goes through xDSL's Python-level __hash__, which dominates a trace otherwise.
            return ExprInfo(lambda env, k=id(v): env.get(k), ("iv", id(v)), False, True,
                            I32_MIN, I32_MAX, v.name_hint or "i")
        key = ("param", v.index)
        return self._runtime(key, lambda env: 1, I32_MIN, I32_MAX, v.name_hint or "param")

    @staticmethod
    def _runtime(key: tuple, default: Expr, lo: int, hi: int, text: str,
                 parts: tuple[ExprInfo, ...] = ()) -> ExprInfo:
        # A symbol assignment in the environment overrides the computed value; no loop
        # variable feeds this node, so its value is cached in the environment of a run.
        def fn(env: Env, key=key, default=default) -> int | None:
            r = env.get(key)
            if r is None:
                r = env[key] = default(env)
            return r
        return ExprInfo(fn, key, True, False, lo, hi, text, parts)

    def _wrap(self, v: SSAValue, fn: Expr, key: tuple, ops: list[ExprInfo], lo: int, hi: int,
              text: str) -> ExprInfo:
        runtime = any(o.runtime for o in ops)
        ivdep = any(o.ivdep for o in ops)
        text = v.name_hint or text
        if runtime and not ivdep:
            return self._runtime(key, fn, lo, hi, text, tuple(ops))
        if not runtime and not ivdep:
            c = fn({})
            if c is not None:
                return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c))
        return ExprInfo(fn, key, runtime, ivdep, lo, hi, text, tuple(ops))

    def _binary(self, v: SSAValue, op: Operation) -> ExprInfo:
        name, f = _BINARY[type(op)]
        a, b = self(op.operands[0]), self(op.operands[1])

        def fn(env: Env, fa=a.fn, fb=b.fn, f=f) -> int | None:
            x = fa(env)
            if x is None:
                return None
            y = fb(env)
            return None if y is None else f(x, y)
        lo, hi = _interval(name, (a.lo, a.hi), (b.lo, b.hi))
        text = (f"{name}({a.text}, {b.text})" if name.startswith("lm.")
                else f"{_paren(a)} {name} {_paren(b)}")
        return self._wrap(v, fn, (name, a.key, b.key), [a, b], lo, hi, text)

    def _cmp(self, v: SSAValue, op: arith.CmpiOp) -> ExprInfo:
        p = op.predicate.value.data
        a, b = self(op.lhs), self(op.rhs)
        f = _CMP_FN[p]

        def fn(env: Env, fa=a.fn, fb=b.fn, f=f) -> int | None:
            x, y = fa(env), fb(env)
            return None if x is None or y is None else int(f(x, y))
        return self._wrap(v, fn, ("cmp", p, a.key, b.key), [a, b], 0, 1,
                          f"{_paren(a)} {_CMP[p]} {_paren(b)}")

    def _select(self, v: SSAValue, op: arith.SelectOp) -> ExprInfo:
        c, a, b = self(op.cond), self(op.lhs), self(op.rhs)

        def fn(env: Env, fc=c.fn, fa=a.fn, fb=b.fn) -> int | None:
            x = fc(env)
            return None if x is None else (fa(env) if x else fb(env))
        return self._wrap(v, fn, ("select", c.key, a.key, b.key), [c, a, b],
                          min(a.lo, b.lo), max(a.hi, b.hi),
                          f"{a.text} if {c.text} else {b.text}")


def _paren(e: ExprInfo) -> str:
    return f"({e.text})" if " " in e.text and not e.text.startswith("lm.") else e.text
