"""Scalar expressions of the barrier protocol model: SSA integers compiled to functions.

`Exprs` turns an SSA scalar (arith ops, loop variables, kernel parameters, block ids, dims,
the SM count) into an `ExprInfo`: a function `env -> int | None` over an environment of loop
variables and the values of a launch (launch.py), a structural key (the same expression
written twice shares it), whether it depends on a runtime value or a loop variable, a
conservative value interval, the author's text for it and the operands it is built from.

An expression that a loop variable feeds is evaluated at every iteration of every trace, so
it is compiled, once evaluated often, into one Python function of the whole expression (the
tracer's stage expressions `((t // nb) * k_tiles + k) % 4` were a tree of closures, one call
per node); the values that no loop variable feeds cache themselves in the launch's
environment, and one computed often in new environments (the launch search evaluates the
grid and the trip counts under hundreds of leaf values) is compiled from its leaves the same
way.
"""

from __future__ import annotations

import re
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
    #: Python source computing it from `env` (names of `Exprs.ns`), and whether it may be None
    code: str = ""
    nullable: bool = True
    #: its operation's source over its operands `{a}`, `{b}` and whether that may give None
    #: (`_BINARY_CODE`; None for a leaf or an operation without one)
    template: tuple[str, bool] | None = None
    #: a runtime value's source from the launch's leaves, without the environment's caches
    #: (`Exprs._direct`, built when first compiled)
    direct: tuple[str, bool] | None = None

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


#: Source of each binary operation on two operand names, and whether it may give None.
_BINARY_CODE: dict[str, tuple[str, bool]] = {
    "+": ("{a} + {b}", False), "-": ("{a} - {b}", False), "*": ("{a} * {b}", False),
    "//": ("(None if {b} == 0 else {a} // {b})", True),
    # remsi truncates; on a non-negative dividend and a positive divisor (every stage index
    # `k % stages`) that is Python's `%`, without a call
    "%": ("({a} % {b} if {a} >= 0 and {b} > 0 else _c_rem({a}, {b}))", True),
    "lm.cdiv": ("(None if {b} == 0 else -(-{a} // {b}))", True),
    "lm.min": ("min({a}, {b})", False), "lm.max": ("max({a}, {b})", False),
    "and": ("{a} & {b}", False), "or": ("{a} | {b}", False), "^": ("{a} ^ {b}", False),
}
_CMP_CODE = ["==", "!=", "<", "<=", ">", ">="] * 2
#: Longest operand source inlined into its user; a longer one is called by name, so that
#: shared sub-expressions (x = x + x, …) keep the source linear in the expression's size.
_INLINE_MAX = 2000
#: Evaluations of an expression before it is compiled.
_HOT_CALLS = 32


class Exprs:
    """Compiles SSA scalars to functions `env -> int | None` (None: not computable)."""

    def __init__(self) -> None:
        #: by the value's identity: an SSA value hashes through a Python method, and the IR
        #: outlives the model
        self.memo: dict[int, ExprInfo] = {}
        #: the names the compiled sources use: helpers, then the functions of operands that
        #: are not inlined (runtime values, long sources)
        self.ns: dict[str, object] = {"_c_rem": _c_rem}
        self.nvars = 0  # walrus variables of the sources, numbered apart
        self.slots: dict[tuple, int] = {}  # runtime value key → its small key in an env

    def __call__(self, v: SSAValue) -> ExprInfo:
        info = self.memo.get(id(v))
        if info is None:
            info = self._build(v)
            self.memo[id(v)] = info
        return info

    def _build(self, v: SSAValue) -> ExprInfo:
        if isinstance(v, BlockArgument):
            return self._block_arg(v)
        op = v.owner
        assert isinstance(op, Operation)
        if isinstance(op, arith.ConstantOp):
            c = op.value.value.data if hasattr(op.value, "value") else 0
            c = int(c)
            return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c),
                            code=repr(c), nullable=False)
        if type(op) in _LEAVES:
            label, lo, hi, default = _LEAVES[type(op)]
            dim_attr = op.properties.get("dim")
            dim = "" if dim_attr is None else str(dim_attr.value.data)
            key = (label, dim)
            text = v.name_hint or f"{label}({dim})"
            return self._leaf(key, default, lo, hi, text)
        if isinstance(op, cake.DimOp):
            t = self(op.tensor)
            idx = op.index.value.data
            key = ("dim", t.key, idx)
            return self._leaf(key, 1, 0, I32_MAX, v.name_hint or f"{t.text}.shape[{idx}]")
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
                            I32_MIN, I32_MAX, v.name_hint or "i", code=f"env.get({id(v)})")
        key = ("param", v.index)
        return self._leaf(key, 1, I32_MIN, I32_MAX, v.name_hint or "param")

    def _leaf(self, key: tuple, default: int, lo: int, hi: int, text: str) -> ExprInfo:
        """A runtime leaf: the value the launch assigns to its key (launch.py), else
        `default`."""
        info = self._runtime(key, lambda env: default, lo, hi, text)
        var, name = self._var(), f"_k{len(self.ns)}"
        self.ns[name] = key
        info.direct = f"({var} if ({var} := env.get({name})) is not None else {default})", False
        return info

    def _runtime(self, key: tuple, compute: Expr, lo: int, hi: int, text: str,
                 parts: tuple[ExprInfo, ...] = (),
                 template: tuple[str, bool] | None = None) -> ExprInfo:
        # No loop variable feeds this node: its value is cached in the environment of a run
        # under a small negative number (loop variables are keyed by ids, which are positive;
        # hashing the nested structural key at every use cost more than the arithmetic). A
        # leaf (no parts) takes the value the launch assigns to its key (launch.py) when there
        # is one. Where the cache misses, `compute` runs: through the operands' closures (and
        # caches), or, once hot, compiled from the leaves (`_direct`).
        slot = self.slots.setdefault(key, -1 - len(self.slots))
        miss = [compute]

        def fn(env: Env, key=key if not parts else None, slot=slot) -> int | None:
            r = env.get(slot)
            if r is None:
                r = env.get(key) if key is not None else None
                if r is None:
                    r = miss[0](env)
                env[slot] = r
            return r
        var, name = self._var(), f"_r{len(self.ns)}"
        self.ns[name] = fn
        info = ExprInfo(fn, key, True, False, lo, hi, text, parts,
                        f"({var} if ({var} := env.get({slot})) is not None else {name}(env))",
                        template=template)
        if template is not None:
            miss[0] = self._compiled_when_hot(compute, lambda: self._direct(info)[0],
                                              lambda f: miss.__setitem__(0, f))
        return info

    def _var(self) -> str:
        """A walrus variable for a source, named apart from the others."""
        self.nvars += 1
        return f"_v{self.nvars}"

    def _wrap(self, v: SSAValue, fn: Expr, key: tuple, ops: list[ExprInfo], lo: int, hi: int,
              text: str, template: tuple[str, bool] | None = None) -> ExprInfo:
        runtime = any(o.runtime for o in ops)
        ivdep = any(o.ivdep for o in ops)
        text = v.name_hint or text
        if runtime and not ivdep:
            return self._runtime(key, fn, lo, hi, text, tuple(ops), template)
        if not runtime and not ivdep:
            c = fn({})
            if c is not None:
                return ExprInfo(lambda env, c=c: c, ("c", c), False, False, c, c, str(c),
                                code=repr(c), nullable=False)
        if template is None:
            return ExprInfo(fn, key, runtime, ivdep, lo, hi, text, tuple(ops))
        code = self._source(*template, ops)
        info = ExprInfo(fn, key, runtime, ivdep, lo, hi, text, tuple(ops), code[0], code[1],
                        template)
        if ivdep:
            info.fn = self._compiled_when_hot(fn, lambda: info.code,
                                              lambda f: setattr(info, "fn", f))
        return info

    def _compiled_when_hot(self, closure: Expr, source: Callable[[], str],
                           swap: Callable[[Expr], None]) -> Expr:
        """A function that evaluates through `closure` for its first calls and, once the
        expression is evaluated often (a stage expression in a loop, a grid in the launch
        search), compiles `source()` and stands in for it, handing the compiled function to
        `swap` (for the callers that look it up again): compiling costs about as much as 100
        evaluations, and most sub-expressions are only ever evaluated inside their users'
        source."""
        compiled: list[Expr] = []
        calls = [0]

        def fn(env: Env) -> int | None:
            if compiled:
                return compiled[0](env)
            calls[0] += 1
            if calls[0] < _HOT_CALLS:
                return closure(env)
            compiled.append(_compile(source(), self.ns))
            swap(compiled[0])
            return compiled[0](env)
        return fn

    def _operand(self, e: ExprInfo) -> tuple[str, bool]:
        """(source, may be None) of an operand inside its user's source."""
        if e.code and len(e.code) <= _INLINE_MAX:
            return e.code, e.nullable
        return self._by_name(e)

    def _by_name(self, e: ExprInfo) -> tuple[str, bool]:
        """(source, may be None) calling an operand's function by its name."""
        name = f"_f{len(self.ns)}"
        self.ns[name] = (lambda env, e=e: e.fn(env)) if e.ivdep else e.fn
        return f"{name}(env)", True

    def _direct(self, e: ExprInfo) -> tuple[str, bool]:
        """(source, may be None) of a value that no loop variable feeds, from the leaves of
        the launch rather than the values cached in the environment: the launch search
        evaluates it in a new environment each time, where every cache misses."""
        if e.direct is None:
            if not e.runtime and e.code:
                e.direct = e.code, e.nullable
            elif e.template is not None:
                e.direct = self._source(*e.template, list(e.parts), self._direct_operand)
            else:
                e.direct = self._by_name(e)
        return e.direct

    def _direct_operand(self, e: ExprInfo) -> tuple[str, bool]:
        """`_direct` of an operand inside its user's source; a long one (shared
        sub-expressions: x = x + x, …) is called by name, through its cache."""
        src, nullable = self._direct(e)
        return (src, nullable) if len(src) <= _INLINE_MAX else self._by_name(e)

    def _source(self, template: str, nullable: bool, ops: list[ExprInfo],
                operand: Callable[[ExprInfo], tuple[str, bool]] | None = None
                ) -> tuple[str, bool]:
        """The source of `template` over the operands (`{a}`, `{b}`, each evaluated once, in
        order, their sources by `operand`: `_operand` unless given): None as soon as an
        operand is None, as the closures give it."""
        names: dict[str, str] = {}
        guards: list[str] = []
        for slot, e in zip("ab", ops):
            src, may_none = (operand or self._operand)(e)
            if not may_none and src.lstrip("-").isdigit():
                names[slot] = f"({src})"  # a literal: used as it is
                continue
            names[slot] = var = self._var()
            guards.append(f"({var} := {src}) is None")
            nullable = nullable or may_none
        body = template.format(**names)
        if guards:
            return f"(None if {' or '.join(guards)} else {body})", nullable
        return f"({body})", nullable

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
        return self._wrap(v, fn, (name, a.key, b.key), [a, b], lo, hi, text, _BINARY_CODE[name])

    def _cmp(self, v: SSAValue, op: arith.CmpiOp) -> ExprInfo:
        p = op.predicate.value.data
        a, b = self(op.lhs), self(op.rhs)
        f = _CMP_FN[p]

        def fn(env: Env, fa=a.fn, fb=b.fn, f=f) -> int | None:
            x, y = fa(env), fb(env)
            return None if x is None or y is None else int(f(x, y))
        return self._wrap(v, fn, ("cmp", p, a.key, b.key), [a, b], 0, 1,
                          f"{_paren(a)} {_CMP[p]} {_paren(b)}",
                          (f"int({{a}} {_CMP_CODE[p]} {{b}})", False))

    def _select(self, v: SSAValue, op: arith.SelectOp) -> ExprInfo:
        c, a, b = self(op.cond), self(op.lhs), self(op.rhs)

        def fn(env: Env, fc=c.fn, fa=a.fn, fb=b.fn) -> int | None:
            x = fc(env)
            return None if x is None else (fa(env) if x else fb(env))
        return self._wrap(v, fn, ("select", c.key, a.key, b.key), [c, a, b],
                          min(a.lo, b.lo), max(a.hi, b.hi),
                          f"{a.text} if {c.text} else {b.text}")


#: A source's walrus variables, names of `Exprs.ns` and integer literals (split apart)
_NAMES = re.compile(r"\b(_[vrkf]\d+|\d+)\b")
#: Compiled shapes: a source with its names and literals numbered in order of appearance →
#: the function making it over their values (`_compile`)
_SHAPES: dict[str, Callable[..., Expr]] = {}
_MAX_SHAPES = 4096


def _compile(source: str, ns: dict[str, object]) -> Expr:
    """`lambda env: <source>` over the names of `ns`. Expressions of one shape (the same
    operations over other constants, slots, loop variables or operands: the stage
    expressions of every kernel that writes `(... + k) % stages`) share one compiled
    function, made over their values: Python's compiler costs ~100 µs a source, numbering
    its names a tenth of that."""
    parts = _NAMES.split(source)  # text, name, text, name, …
    numbered: dict[str, str] = {}  # name or literal → its name in the shape
    params: list[str] = []
    for i in range(1, len(parts), 2):
        tok = parts[i]
        name = numbered.get(tok)
        if name is None:
            if tok.startswith("_v"):  # a walrus variable: local to the shape
                name = numbered[tok] = f"_w{len(numbered)}"
            else:
                name = numbered[tok] = f"_p{len(params)}"
                params.append(tok)
        parts[i] = name
    shape = "".join(parts)
    make = _SHAPES.get(shape)
    if make is None:
        if len(_SHAPES) >= _MAX_SHAPES:
            _SHAPES.clear()
        args = ", ".join(f"_p{i}" for i in range(len(params)))
        make = _SHAPES[shape] = eval(  # noqa: S307 - our own generated source
            f"lambda {args}: lambda env: {shape}", {"_c_rem": _c_rem})
    return make(*(ns[t] if t[0] == "_" else int(t) for t in params))


def _paren(e: ExprInfo) -> str:
    return f"({e.text})" if " " in e.text and not e.text.startswith("lm.") else e.text
