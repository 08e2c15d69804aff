"""Frontend: `cakec.frontend.ast` → xDSL module in the `cake` dialect, with name resolution and
typing. Problems become CAKE-T… diagnostics; each statement is checked independently so
one mistake yields one error and later statements are still checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, IntegerAttr, ModuleOp, NoneType, f32, i1, i32, i64
from xdsl.ir import Block, Operation, Region, SSAValue

from cakec.frontend import ast
from cakec.interned import (
    i64_array, integer_attr, location_attr, stage_type, string_array, string_attr, tensor_type,
    tile_type, unit_type, view_type,
)
from cakec.frontend.builtins import (
    DTYPE_NAMES, KIND_NAMES, LM_FUNCTIONS, METHODS, PARAM_TYPES, Arg, Builtin,
)
from cakec.diagnostics import CompileError, DiagnosticSink, Note, Span, error
from cakec.dialects import cake
from cakec.frontend.tile_exprs import TILE_BUILDERS, assign_regs, predicate_binop, tile_binop, unary
from cakec.frontend.values import Value, decl_note, describe

class Poisoned(Exception):
    """A use of a name whose definition already failed: its error was reported once."""


# ---- compile-time values -------------------------------------------------------------------


_ARITH = {"+": arith.AddiOp, "-": arith.SubiOp, "*": arith.MuliOp, "//": arith.FloorDivSIOp,
          "%": arith.RemSIOp}
_FARITH = {"+": arith.AddfOp, "-": arith.SubfOp, "*": arith.MulfOp, "/": arith.DivfOp}
#: arith.cmpi's predicate (signed) per comparison
_CMP = {"==": 0, "!=": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}
_PYCMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}

_I32_MAX = 2**31 - 1


# The two ops of most of a kernel's scalar arithmetic, built through `Operation.create` with
# what their IRDL constructors would give them (an i32 result; the default overflow flags of
# the ops that have them): IRDL's per-argument building was the larger part of the IR build.
_NO_OVERFLOW = {"overflowFlags": arith.IntegerOverflowAttr("none")}


def _constant(value: IntegerAttr) -> Operation:
    return arith.ConstantOp.create(result_types=[value.type], properties={"value": value})


def _arith_op(cls: type[Operation], lhs: SSAValue, rhs: SSAValue) -> Operation:
    flags = issubclass(cls, arith.SignlessIntegerBinaryOperationWithOverflow)
    return cls.create(operands=[lhs, rhs], result_types=[lhs.type],
                      properties=dict(_NO_OVERFLOW) if flags else {})


def _compare(lhs: SSAValue, rhs: SSAValue, predicate: int) -> Operation:
    """`arith.CmpiOp(lhs, rhs, predicate)` of two i32 values, as its constructor builds it
    (which makes its i64 predicate type afresh)."""
    return arith.CmpiOp.create(operands=[lhs, rhs], result_types=[i1],
                               properties={"predicate": integer_attr(predicate, i64)})


def _did_you_mean(name: str, options: Iterable[str]) -> str | None:
    import difflib  # only a misspelt name needs it (heapq and all: not on every start)

    close = difflib.get_close_matches(name, list(options), n=1, cutoff=0.6)
    return f"did you mean `{close[0]}`?" if close else None


@dataclass
class Scope:
    names: dict[str, Value]
    parent: "Scope | None"
    label: str  # for "defined inside ..." notes

    def lookup(self, name: str) -> Value | None:
        s: Scope | None = self
        while s is not None:
            if name in s.names:
                return s.names[name]
            s = s.parent
        return None


class Frontend:
    """Builds one module from one parsed file, reporting into `sink`."""

    def __init__(self, path: str, sink: DiagnosticSink):
        self.path = path
        self.sink = sink
        self.spans: dict[Operation, Span] = {}
        self.block: Block = Block()
        self.scope = Scope({}, None, "kernel")
        self.closed: dict[str, tuple[Value, str]] = {}  # names of finished inner scopes
        self.in_role: Value | None = None
        self.lm_name = "lm"
        self.tensor_dtypes: dict[SSAValue, tuple[str, Span]] = {}
        #: `if lm.any(...):` — the call being built as that condition (tile_exprs), then the
        #: `if` whose body is being built (only register arithmetic may be added there).
        self.any_condition: ast.Call | None = None
        self.per_warp: ast.If | None = None

    # ---- driver -----------------------------------------------------------------------------

    def build(self, module: ast.Module) -> ModuleOp:
        ops: list[Operation] = []
        kernels = 0
        for stmt in module.body:
            if isinstance(stmt, ast.FuncDef):
                kernels += 1
                try:
                    ops.append(self._kernel(stmt))
                except CompileError as e:
                    self.sink.report(e.diagnostic)
            else:
                self.sink.error("CAKE-T012", "only `@cake.schedule` kernel definitions may appear "
                                "at the top level of a .cake file", _start(stmt.span),
                                help="put this statement inside the kernel's body")
        if kernels == 0 and not self.sink.has_errors:
            self.sink.error("CAKE-T014", "no kernel in this file", Span(self.path, 1, 1),
                            help="define one: `@cake.schedule()` then `def NAME(lm, ...):`")
        return self._loc(ModuleOp(ops), Span(self.path, 1, 1))

    def _loc(self, op: Operation, span: Span) -> Operation:
        op.location = self._location(span.line, span.col)
        self.spans[op] = span
        return op

    def _location(self, line: int, col: int) -> FileLineColLoc:
        return location_attr(self.path, line, col)

    def _add(self, op: Operation, span: Span) -> Operation:
        if self.per_warp is not None and not _register_arithmetic(op):
            raise error("CAKE-T011", f"`{_op_label(op)}` inside `if lm.any(...):`, a branch "
                        "each warp takes or not on its own: only register-tile arithmetic "
                        "may run there", span,
                        notes=[Note(_start(self.per_warp.span), "the per-warp branch")],
                        help="move it out of the branch; MMAs, barriers, copies, loops and "
                        "other branches run in every warp of the role alike")
        self.block.add_op(self._loc(op, span))
        return op

    # ---- kernel -----------------------------------------------------------------------------

    def _kernel(self, fn: ast.FuncDef) -> Operation:
        target, blocks_per_sm, cluster = self._decorator(fn)
        self.cluster = cluster
        params = fn.params
        if not params or params[0].annotation is not None:
            span = params[0].span if params else fn.name_span
            raise error("CAKE-T014", f"the first parameter of kernel `{fn.name}` must be the "
                        "builder handle `lm` (without annotation)", span,
                        help=f"write `def {fn.name}(lm, ...)`")
        self.lm_name = params[0].name
        arg_types: list[Any] = []
        names: list[str] = []
        infos: list[tuple[ast.Param, str, int, bool, str | None]] = []
        seen: dict[str, Span] = {self.lm_name: params[0].span}
        for p in params[1:]:
            if p.name in seen:
                raise error("CAKE-T002", f"parameter `{p.name}` is defined twice", p.span,
                            notes=[Note(seen[p.name], "first defined here")])
            seen[p.name] = p.span
            if p.annotation is None:
                raise error("CAKE-T014", f"kernel parameter `{p.name}` needs a type", p.span,
                            help=f"annotate it, e.g. `{p.name}: LM.tma2d` or `{p.name}: LM.i32`")
            ann = p.annotation
            if len(ann) != 2 or ann[0] != "LM" or ann[1] not in PARAM_TYPES:
                hint = _did_you_mean(ann[-1], PARAM_TYPES) if ann[0] == "LM" else None
                raise error("CAKE-T009", f"unknown parameter type `{'.'.join(ann)}`",
                            p.annotation_span or p.span,
                            help=hint or "parameter types are " + ", ".join(
                                f"LM.{t}" for t in PARAM_TYPES))
            kind, rank, tma, sdtype = PARAM_TYPES[ann[1]]
            names.append(p.name)
            if kind == "tensor":
                arg_types.append(tensor_type(rank, unit_type(NoneType), tma))
            else:
                arg_types.append(cake.dtype_attr(sdtype or "i32"))
            infos.append((p, kind, rank, tma, sdtype))

        body = Block(arg_types=arg_types)
        kernel = cake.KernelOp.build(
            properties={"sym_name": string_attr(fn.name),
                        "param_names": string_array(names),
                        **({"target": string_attr(target)} if target else {}),
                        **({"blocks_per_sm": integer_attr(blocks_per_sm, i64)}
                           if blocks_per_sm else {}),
                        **({"cluster": i64_array(cluster)}
                           if cluster else {})},
            regions=[Region(body)])
        self._loc(kernel, fn.name_span)
        self.block = body
        self.scope = Scope({}, None, "kernel")
        self.closed = {}
        self.tensor_dtypes = {}
        self.scope.names[self.lm_name] = Value("lm", params[0].span)
        for (p, kind, rank, tma, sdtype), arg in zip(infos, body.args):
            arg.name_hint = p.name
            arg.location = self._location(p.span.line, p.span.col)
            if kind == "tensor":
                self.scope.names[p.name] = Value("tensor", p.span, ssa=arg,
                                                 info={"rank": rank, "tma": tma, "name": p.name})
            else:
                k = "int" if sdtype == "i32" else "float"
                self.scope.names[p.name] = Value(k, p.span, ssa=arg, info={"name": p.name})
        self._stmts(fn.body)
        _check_cluster_sync(body, self.spans)
        # Tensor element types are inferred from the views they feed (one dtype each).
        for arg in body.args:
            if arg in self.tensor_dtypes:
                t = arg.type
                arg._type = tensor_type(len(t.dims()), cake.dtype_attr(
                    self.tensor_dtypes[arg][0]), bool(t.tma.data))
        return kernel

    def _decorator(self, fn: ast.FuncDef
                   ) -> tuple[str | None, int | None, tuple[int, int, int] | None]:
        """`@cake.schedule(...)`'s options: (target, blocks_per_sm, cluster), None where not
        given."""
        decos = [d for d in fn.decorators if d.name == ("cake", "schedule")]
        for d in fn.decorators:
            if d.name != ("cake", "schedule"):
                raise error("CAKE-T015", f"unknown decorator `@{'.'.join(d.name)}`", d.span,
                            help="kernels are declared with `@cake.schedule(...)`")
        if not decos:
            raise error("CAKE-T015", f"kernel `{fn.name}` is missing `@cake.schedule()`",
                        fn.name_span, help="add `@cake.schedule()` on the line before `def`")
        d = decos[0]
        if d.args:
            raise error("CAKE-T013", "`@cake.schedule` takes keyword arguments only",
                        d.args[0].span)
        target, blocks_per_sm, cluster = None, None, None
        for kw in d.kwargs:
            if kw.name == "cluster":
                cluster = _cluster_shape(kw.value)
                continue
            if kw.name == "blocks_per_sm":
                if not isinstance(kw.value, ast.IntLit) or kw.value.value < 1:
                    raise error("CAKE-T007", "`blocks_per_sm` must be a positive integer "
                                "literal such as 2", kw.value.span,
                                help="the blocks the launch keeps resident on one SM "
                                "(`__launch_bounds__(threads, blocks_per_sm)`)")
                blocks_per_sm = kw.value.value
                continue
            if kw.name != "target":
                raise error("CAKE-T005", f"unknown keyword argument `{kw.name}` for "
                            "`@cake.schedule`", kw.span,
                            help="the options are `target=`, `blocks_per_sm=` and "
                            "`cluster=`")
            if not isinstance(kw.value, ast.StrLit):
                raise error("CAKE-T007", "`target` must be a string such as \"sm_90a\"",
                            kw.value.span)
            from cakec.targets.sku import SKUS

            if kw.value.value not in SKUS:
                raise error("CAKE-T009", f"unknown target `{kw.value.value}`", kw.value.span,
                            help="known targets: " + ", ".join(SKUS))
            target = kw.value.value
        return target, blocks_per_sm, cluster

    # ---- statements -------------------------------------------------------------------------

    def _stmts(self, stmts: Iterable[ast.Stmt]) -> None:
        for s in stmts:
            try:
                self._stmt(s)
                continue
            except Poisoned:
                pass
            except CompileError as e:
                self.sink.report(e.diagnostic)
            # Bind the targets of a failed assignment, including one that failed only
            # because it used an earlier failure, so later uses do not cascade.
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    self.scope.names.setdefault(t.id, Value("poison", t.span))
            elif isinstance(s, (ast.With, ast.For, ast.If)):
                self._check_body_only(s)

    def _check_body_only(self, s: ast.With | ast.For | ast.If) -> None:
        """A block whose header failed is still checked, into a discarded block, so that
        independent mistakes inside it surface; its loop variable is poisoned."""
        label = f"the block at line {s.span.line}"
        role = Value("role", s.span) if isinstance(s, ast.With) and self.in_role is None else None
        bind = (s.var, Value("poison", s.var.span)) if isinstance(s, ast.For) else None
        try:
            self._nested(Block(), s.body, label, role=role, bind=bind)
            if isinstance(s, ast.If):
                self._nested(Block(), s.orelse, label)
        except CompileError as e:
            self.sink.report(e.diagnostic)
        except Poisoned:
            pass

    def _stmt(self, s: ast.Stmt) -> None:
        if isinstance(s, ast.Assign):
            self._assign(s)
        elif isinstance(s, ast.ExprStmt):
            v = self._expr(s.value, statement=True)
            if v.kind not in ("none", "poison") and not isinstance(s.value, ast.Call):
                raise error("CAKE-T012", "this expression has no effect", s.span,
                            help="assign it to a name or remove it")
        elif isinstance(s, ast.Pass):
            pass
        elif isinstance(s, ast.With):
            self._with(s)
        elif isinstance(s, ast.For):
            self._for(s)
        elif isinstance(s, ast.If):
            self._if(s)
        elif isinstance(s, ast.FuncDef):
            raise error("CAKE-T012", "nested function definitions are not part of Cake",
                        s.name_span, help="Cake has no user functions: write the schedule inline")

    def _bind(self, name: ast.Name, v: Value) -> None:
        prev = self.scope.lookup(name.id)
        if name.id == self.lm_name:
            raise error("CAKE-T002", f"`{name.id}` is the builder handle and cannot be rebound",
                        name.span)
        if prev is not None and prev.kind != "poison":
            raise error("CAKE-T002", f"`{name.id}` is already defined", name.span,
                        notes=[Note(prev.span, f"`{name.id}` was defined here")],
                        help="Cake names are single-assignment: choose a new name")
        v.span = name.span
        self.scope.names[name.id] = v

    def _assign(self, s: ast.Assign) -> None:
        if s.aug_op is not None:
            raise error("CAKE-T012", f"augmented assignment `{s.aug_op}=` is not supported",
                        s.span, help="Cake names are single-assignment: bind a new name")
        v = self._expr(s.value)
        if v.kind == "none":
            raise error("CAKE-T007", "this call returns nothing to assign", s.value.span)
        if v.kind == "str":  # docs/language.md: strings appear only as `target=`
            raise error("CAKE-T011", "a string can only be the `target=` of `@cake.schedule`",
                        s.value.span, help="names hold integers, floats, booleans and the "
                        "resources `lm.*` declares")
        if len(s.targets) == 1:
            t = s.targets[0]
            prev = self.scope.lookup(t.id)
            if prev is not None and prev.kind == "tile" and isinstance(
                    getattr(prev.ssa, "owner", None), cake.RegsOp):
                assign_regs(self, t, prev, v, s.value.span)
                return
            _refuse_regs_alias(t, v, s.value.span)
            if v.ssa is not None and not v.ssa.name_hint:
                v.ssa.name_hint = t.id
            op = v.ssa.owner if v.ssa is not None else None
            if isinstance(op, Operation) and "sym_name" in op.properties:
                op.properties["sym_name"] = string_attr(t.id)
            self._bind(t, Value(v.kind, t.span, v.const, v.ssa, {**v.info, "name": t.id}))
            return
        if v.kind != "tuple" or len(v.const) != len(s.targets):
            n = len(v.const) if v.kind == "tuple" else 1
            raise error("CAKE-T007", f"cannot unpack {describe(v)} of {n} value(s) into "
                        f"{len(s.targets)} names", s.span)
        for t, item in zip(s.targets, v.const):
            self._bind(t, item)

    def _with(self, s: ast.With) -> None:
        role = self._expr(s.context)
        if role.kind != "role":
            raise error("CAKE-T007", f"`with` expects a role, got {describe(role)}",
                        s.context.span, help="declare one with `NAME = lm.role(warps=[...])`")
        if self.in_role is not None:
            raise error("CAKE-T011", "role blocks cannot be nested", _start(s.span),
                        notes=[Note(_start(self.in_role.span), "inside this role block")])
        op = cake.OnRoleOp.build(operands=[role.ssa], regions=[Region(Block())])
        self._add(op, _start(s.span))
        self._nested(op.body.block, s.body, f"the `with {role.info.get('name', 'role')}:` block "
                     f"at line {s.span.line}", role=Value("role", s.span, info=role.info))

    def _nested(self, block: Block, body: Iterable[ast.Stmt], label: str,
                role: Value | None = None, bind: tuple[ast.Name, Value] | None = None) -> None:
        saved_block, saved_scope, saved_role = self.block, self.scope, self.in_role
        self.block = block
        self.scope = Scope({}, saved_scope, label)
        if role is not None:
            self.in_role = role
        try:
            if bind is not None:
                self._bind_or_poison(*bind)
            self._stmts(body)
        finally:
            for name, v in self.scope.names.items():
                self.closed.setdefault(name, (v, label))
            self.block, self.scope, self.in_role = saved_block, saved_scope, saved_role

    def _bind_or_poison(self, name: ast.Name, v: Value) -> None:
        # A loop variable that cannot be bound is reported once; the body is still checked.
        try:
            self._bind(name, v)
        except CompileError as e:
            self.sink.report(e.diagnostic)
            self.scope.names[name.id] = Value("poison", name.span)

    def _for(self, s: ast.For) -> None:
        it = s.iter
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                and isinstance(it.func.value, ast.Name) and it.func.value.id == self.lm_name
                and it.func.attr == "range"):
            raise error("CAKE-T007", "loops iterate over `lm.range(...)`", it.span,
                        help="write `for i in lm.range(start, stop):`")
        b = self._bind_call(LM_FUNCTIONS["range"], it, None)
        start, stop, step = b["start"], b["stop"], b["step"]
        if stop is None:
            start, stop = Value("int", it.span, const=0), start
        if step.is_const and step.const < 1:
            raise error("CAKE-T010", "the step of lm.range must be at least 1", step.span)
        op = cake.ForOp.build(operands=[self._i32(start), self._i32(stop), self._i32(step)],
                              regions=[Region(Block(arg_types=[i32]))])
        self._add(op, _start(s.span))
        iv = op.body.block.args[0]
        iv.name_hint = s.var.id
        iv.location = self._location(s.var.span.line, s.var.span.col)
        consts = {k: v.const for k, v in (("lb", start), ("ub", stop), ("step", step))
                  if v.is_const}
        self._nested(op.body.block, s.body, f"the loop at line {s.span.line}",
                     bind=(s.var, Value("int", s.var.span, ssa=iv,
                                        info={"loop": op, "bounds": consts})))

    def _if(self, s: ast.If) -> None:
        any_call = _any_call(s.cond, self.lm_name)
        self.any_condition = any_call
        try:
            cond = self._coerce(self._expr(s.cond), Arg("condition", "bool"), s.cond)
        finally:
            self.any_condition = None
        op = cake.IfOp.build(operands=[self._i1(cond)], regions=[Region(Block()), Region(Block())])
        self._add(op, _start(s.span))
        if any_call is None:
            self._nested(op.then_region.block, s.body, f"the `if` at line {s.span.line}")
            self._nested(op.else_region.block, s.orelse, f"the `else` of line {s.span.line}")
            return
        if s.orelse:
            raise error("CAKE-T011", "`if lm.any(...):` takes no `else`: each warp takes the "
                        "branch or not on its own", _start(s.orelse[0].span),
                        notes=[Note(_start(s.span), "the per-warp branch")],
                        help="put the other path's work before the branch, unconditionally")
        self.per_warp = s
        try:
            self._nested(op.then_region.block, s.body, f"the `if` at line {s.span.line}")
        finally:
            self.per_warp = None

    # ---- expressions ------------------------------------------------------------------------

    def _expr(self, e: ast.Expr, statement: bool = False) -> Value:
        build = _EXPRS.get(type(e))
        if build is None:
            raise error("CAKE-T012", "unsupported expression", e.span)
        return build(self, e)

    def _literal(self, e: ast.IntLit | ast.FloatLit | ast.BoolLit | ast.StrLit) -> Value:
        return Value(_LITERALS[type(e)], e.span, const=e.value)

    def _size(self, e: ast.SizeLit) -> Value:
        return Value("size", e.span, const=e.value, info={"text": e.text})

    def _none(self, e: ast.NoneLit) -> Value:
        return Value("none", e.span)

    def _sequence(self, e: ast.TupleLit | ast.ListLit) -> Value:
        items = tuple(self._expr(i) for i in e.items)
        return Value("tuple", e.span, const=items, info={"list": isinstance(e, ast.ListLit)})

    def _name(self, e: ast.Name) -> Value:
        v = self.scope.lookup(e.id)
        if v is not None:
            if v.kind == "poison":
                raise Poisoned()
            return v
        if e.id in self.closed:
            _, label = self.closed[e.id]
            raise error("CAKE-T001", f"`{e.id}` is not visible here", e.span,
                        notes=[Note(self.closed[e.id][0].span, f"`{e.id}` is defined inside "
                                    f"{label} and is local to it")],
                        help="define it at kernel level to share it between blocks")
        if e.id in ("LM", "cake"):
            raise error("CAKE-T001", f"`{e.id}` may only appear in "
                        + ("parameter annotations" if e.id == "LM" else "the decorator"), e.span,
                        help=f"use `{self.lm_name}.…` for builtins" if e.id == "LM" else None)
        names = [n for s in _scopes(self.scope) for n in s.names]
        raise error("CAKE-T001", f"undefined name `{e.id}`", e.span,
                    help=_did_you_mean(e.id, names))

    def _attribute(self, e: ast.Attribute) -> Value:
        base = self._expr(e.value)
        if base.kind == "lm":
            if e.attr in DTYPE_NAMES:
                return Value("dtype", e.span, const=e.attr)
            if e.attr == "inf":  # the fill that never wins a minimum
                return Value("float", e.span, const=float("inf"))
            if e.attr in ("nan", "zero"):  # TMA's out-of-bounds fills
                return Value("fill", e.span, const=e.attr)
            if e.attr in LM_FUNCTIONS:
                return Value("builtin", e.span, const=LM_FUNCTIONS[e.attr])
            raise error("CAKE-T003", f"unknown builtin `{self.lm_name}.{e.attr}`", e.span,
                        help=_did_you_mean(e.attr, [*LM_FUNCTIONS, *DTYPE_NAMES]))
        if base.kind == "tensor" and e.attr == "shape":
            return Value("shape_of", e.span, info={"tensor": base})
        if base.kind in ("view", "stage") and e.attr == "T":
            return self._transpose(base, e)
        methods = METHODS.get(base.kind, {})
        if e.attr in methods:
            return Value("builtin", e.span, const=methods[e.attr], info={"self": base})
        what = base.info.get("name", describe(base))
        stage_method = base.kind == "view" and e.attr in METHODS["stage"]
        raise error("CAKE-T004", f"{describe(base)} has no method `{e.attr}`", e.span,
                    notes=[Note(base.span, f"`{what}` is declared here")] if "name" in base.info
                    else [], help=f"`{e.attr}` reads one stage: `{what}[s].{e.attr}()`"
                    if stage_method else _did_you_mean(e.attr, methods) or (
                        "its methods are " + ", ".join(f"`{m}`" for m in methods)
                        if methods else None))

    def _call(self, e: ast.Call) -> Value:
        fn = self._expr(e.func)
        if fn.kind != "builtin":
            raise error("CAKE-T007", f"{describe(fn)} is not callable", e.func.span)
        spec: Builtin = fn.const
        if spec.name == "range":
            raise error("CAKE-T011", "`lm.range` may only be used as the iterable of a `for` "
                        "loop", e.span)
        self._check_context(spec, e)
        recv = fn.info.get("self")
        b = self._bind_call(spec, e, recv)
        return _BUILD[_key(spec, recv)](self, e, b, recv)

    def _check_context(self, spec: Builtin, e: ast.Call) -> None:
        label = f"`{_callee(e)}`"
        if spec.context == "top" and self.in_role is not None:
            raise error("CAKE-T011", f"{label} declares a resource and must be at kernel level, "
                        "not inside a role block", e.span,
                        notes=[Note(_start(self.in_role.span), "inside this role block")])
        if spec.context == "top" and self.scope.parent is not None:
            raise error("CAKE-T011", f"{label} declares a resource and must be at kernel level",
                        e.span)
        if spec.context == "role" and self.in_role is None:
            raise error("CAKE-T011", f"{label} must run inside a `with ROLE:` block", e.span,
                        help="wrap it in the role that performs it, e.g. `with load:`")

    def _bind_call(self, spec: Builtin, e: ast.Call, recv: Value | None) -> dict[str, Any]:
        callee = _callee(e)
        bound: dict[str, Value | None] = {}
        pos = list(e.args)
        if spec.variadic:
            bound["*"] = tuple(self._coerce(self._expr(a), Arg("dim", spec.variadic), a)
                               for a in pos)
            pos = []
        if len(pos) > len(spec.args):
            raise error("CAKE-T013", f"`{callee}` takes at most {len(spec.args)} positional "
                        f"argument(s), got {len(pos)}", pos[len(spec.args)].span)
        for a, node in zip(spec.args, pos):
            bound[a.name] = self._coerce(self._expr(node), a, node)
        names = {a.name: a for a in spec.args}
        for kw in e.kwargs:
            if kw.name not in names:
                raise error("CAKE-T005", f"unknown keyword argument `{kw.name}` for `{callee}`",
                            _kw_span(kw), help=_did_you_mean(kw.name, names) or (
                                "it takes " + ", ".join(f"`{n}`" for n in names)
                                if names else f"`{callee}` takes no arguments"))
            if kw.name in bound:
                raise error("CAKE-T013", f"argument `{kw.name}` of `{callee}` is given twice",
                            _kw_span(kw))
            bound[kw.name] = self._coerce(self._expr(kw.value), names[kw.name], kw.value)
        for a in spec.args:
            if a.name not in bound:
                if a.required:
                    raise error("CAKE-T006", f"`{callee}` is missing required argument "
                                f"`{a.name}` ({KIND_NAMES.get(a.kind, a.kind)})", e.span,
                                help=f"add `{a.name}=...`")
                bound[a.name] = (None if a.default is None else
                                 Value(_default_kind(a), e.span, const=a.default))
        return bound

    def _coerce(self, v: Value, a: Arg, node: ast.Expr) -> Value:
        """Check that `v` has the kind argument `a` needs (T007/T008/T009/T010)."""
        k = a.kind
        what = f"`{a.name}`"
        if v.kind == "poison":
            raise Poisoned()
        if k == "int":
            if v.kind == "int" and v.ssa is not None:
                raise error("CAKE-T008", f"{what} must be a compile-time constant, got "
                            "a runtime integer", node.span,
                            notes=[Note(v.span, "this value is only known at run time")]
                            if v.span != node.span else [])
            if v.kind != "int":
                raise error("CAKE-T007", f"{what} expects {KIND_NAMES[k]}, got {describe(v)}",
                            node.span)
            self._check_min(v, a, node)
            return v
        if k == "scalar":
            if v.kind == "int":
                if v.is_const:
                    self._check_min(v, a, node)
                return v
            raise error("CAKE-T007", f"{what} expects {KIND_NAMES[k]}, got {describe(v)}",
                        node.span)
        if k == "bool":
            if v.kind == "bool":
                return v
            raise error("CAKE-T007", f"{what} expects {KIND_NAMES[k]}, got {describe(v)}",
                        node.span, help="compare explicitly, e.g. `(k == 0)`"
                        if v.kind == "int" else None)
        if k == "dtype":
            if v.kind != "dtype":
                raise error("CAKE-T009" if v.kind == "str" else "CAKE-T007",
                            f"{what} expects {KIND_NAMES[k]}, got {describe(v)}", node.span,
                            help="dtypes are " + ", ".join(f"lm.{d}" for d in DTYPE_NAMES))
            return v
        if k == "swizzle":
            if v.kind == "none":
                return Value("swizzle", v.span, const="none")
            if v.kind == "size" and v.const in (32, 64, 128):
                return Value("swizzle", v.span, const=v.info["text"])
            raise error("CAKE-T009", f"invalid swizzle {_show(v)}", node.span,
                        help="swizzle tags are 32b, 64b, 128b, or None for no swizzle; omit "
                        "`swizzle=` to let the compiler choose")
        if k == "shape":
            items = self._const_tuple(v, a, node)
            for item, n in zip(items, _items(node)):
                if item <= 0:
                    raise error("CAKE-T010", f"{what} dimensions must be positive, got {item}",
                                n.span)
            if not items:
                raise error("CAKE-T010", f"{what} must have at least one dimension", node.span)
            return Value("shape", v.span, const=tuple(items))
        if k == "ints":
            items = self._const_tuple(v, a, node)
            for item, n in zip(items, _items(node)):
                if item < 0:
                    raise error("CAKE-T010", f"{what} entries must be non-negative, got {item}",
                                n.span)
            return Value("ints", v.span, const=tuple(items))
        if k == "coords":
            if v.kind != "tuple":
                raise error("CAKE-T007", f"{what} expects {KIND_NAMES[k]}, got {describe(v)}",
                            node.span, help="write a tuple, e.g. `coords=(m_tile, k)`")
            return Value("coords", v.span, const=tuple(
                self._coerce(i, Arg(a.name, "scalar"), n) for i, n in zip(v.const, _items(node))))
        if k == "roles":
            if v.kind == "role":
                return Value("roles", v.span, const=(v,))
            if v.kind != "tuple":
                raise error("CAKE-T007", f"{what} expects {KIND_NAMES[k]}, got {describe(v)}",
                            node.span)
            for i, n in zip(v.const, _items(node)):
                if i.kind != "role":
                    raise error("CAKE-T007", f"{what} expects roles, got {describe(i)}", n.span,
                                notes=decl_note(i))
            return Value("roles", v.span, const=v.const)
        if k == "store_src":  # a register tile, or a stage a TMA store copies out
            if v.kind in ("tile", "stage"):
                return v
            if v.kind == "view":
                k = "stage"
        if k in ("mma_a", "mma_b"):  # a stage, its transpose, or (A only) a register tile
            if v.kind == "stage_t" or (k == "mma_a" and v.kind == "tile"):
                return v
            k = "stage"
        if k == "stage":
            if v.kind == "view":
                if v.info.get("stages", 1) != 1:
                    raise error("CAKE-T007", f"{what}: `{v.info.get('name')}` has "
                                f"{v.info['stages']} stages; select one with "
                                f"`{v.info.get('name')}[s]`", node.span)
                return self._stage(v, Value("int", v.span, const=0), node.span)
            if v.kind == "stage":
                return v
        if k == "acc" and v.kind in ("tmem", "tile"):
            return v
        if k == "operand" and v.kind in ("tmem", "tile", "int", "float"):
            return v
        if k == "float" and v.kind in ("float", "int") and v.is_const:
            return v
        if k == "str" and v.kind == "str":
            return v
        if v.kind == k:
            return v
        raise error("CAKE-T007", f"{what} expects {KIND_NAMES.get(k, k)}, got {describe(v)}",
                    node.span, notes=decl_note(v))

    def _check_min(self, v: Value, a: Arg, node: ast.Expr) -> None:
        if a.min is not None and v.const < a.min:
            raise error("CAKE-T010", f"`{a.name}` must be at least {a.min}, got {v.const}",
                        node.span)
        if abs(v.const) > _I32_MAX:
            raise error("CAKE-T010", f"`{a.name}` = {v.const} does not fit in 32 bits",
                        node.span)

    def _const_tuple(self, v: Value, a: Arg, node: ast.Expr) -> list[int]:
        if v.kind != "tuple":
            if v.kind == "int" and v.is_const and a.kind == "ints":
                return [v.const]
            raise error("CAKE-T007", f"`{a.name}` expects {KIND_NAMES[a.kind]}, got "
                        f"{describe(v)}", node.span)
        out = []
        for i, n in zip(v.const, _items(node)):
            if i.kind != "int" or not i.is_const:
                code = "CAKE-T008" if i.kind == "int" else "CAKE-T007"
                raise error(code, f"`{a.name}` entries must be integer constants, got "
                            f"{describe(i)}", n.span)
            if abs(i.const) > _I32_MAX:
                raise error("CAKE-T010", f"`{a.name}` entry {i.const} does not fit in 32 bits",
                            n.span)
            out.append(i.const)
        return out

    def _subscript(self, e: ast.Subscript) -> Value:
        base = self._expr(e.value)
        if len(e.index) != 1 or isinstance(e.index[0], ast.Slice):
            raise error("CAKE-T007", f"{describe(base)} takes exactly one index", e.span)
        idx_node = e.index[0]
        if base.kind == "view":
            idx = self._coerce(self._expr(idx_node), Arg("stage", "scalar"), idx_node)
            return self._stage(base, idx, e.span)
        if base.kind == "shape_of":
            t = base.info["tensor"]
            idx = self._coerce(self._expr(idx_node), Arg("index", "int"), idx_node)
            rank = t.info["rank"]
            if not -rank <= idx.const < rank:
                raise error("CAKE-T010", f"`{t.info['name']}` has rank {rank}; index "
                            f"{idx.const} is out of range", idx_node.span)
            op = cake.DimOp.build(operands=[t.ssa], properties={
                "index": integer_attr(idx.const % rank, i64)}, result_types=[i32])
            self._add(op, e.span)
            return Value("int", e.span, ssa=op.result)
        if base.kind == "tuple":
            idx = self._coerce(self._expr(idx_node), Arg("index", "int"), idx_node)
            if not -len(base.const) <= idx.const < len(base.const):
                raise error("CAKE-T010", "tuple index out of range", idx_node.span)
            return base.const[idx.const]
        raise error("CAKE-T007", f"{describe(base)} cannot be indexed", e.span,
                    notes=decl_note(base))

    def _transpose(self, base: Value, e: ast.Attribute) -> Value:
        """`view[s].T` (`view.T` for a one-stage view): the stage read MN-major by an MMA,
        its shape reversed (`cake.transpose`)."""
        if base.kind == "view":
            if base.info.get("stages", 1) != 1:
                name = base.info.get("name")
                raise error("CAKE-T007", f"`{name}` has {base.info['stages']} stages; select one "
                            f"before transposing: `{name}[s].T`", e.span,
                            notes=[Note(base.span, f"`{name}` is declared here")])
            base = self._stage(base, Value("int", base.span, const=0), e.value.span)
        st: cake.StageType = base.ssa.type
        if len(st.dims()) != 2:
            raise error("CAKE-T007", f"`.T` transposes a 2-D stage; this one has shape "
                        f"{tuple(st.dims())}", e.span)
        op = cake.TransposeOp.build(operands=[base.ssa], result_types=[
            stage_type(st.dims()[::-1], st.element_type, st.swizzle.data)])
        self._add(op, e.span)
        return Value("stage_t", e.span, ssa=op.result, info=dict(base.info))

    def _stage(self, view: Value, idx: Value, span: Span) -> Value:
        stages = view.info.get("stages", 1)
        if idx.is_const and not 0 <= idx.const < stages:
            raise error("CAKE-S008", f"stage {idx.const} is out of range for view "
                        f"`{view.info.get('name')}` with {stages} stage(s)", idx.span,
                        notes=[Note(view.span, f"`{view.info.get('name')}` is declared here")])
        vt: cake.ViewType = view.ssa.type
        op = cake.StageOp.build(operands=[view.ssa, self._i32(idx)], result_types=[
            stage_type(vt.dims(), vt.element_type, vt.swizzle.data)])
        self._add(op, span)
        return Value("stage", span, ssa=op.result, info={"view": view, "index": idx})

    def _binop(self, e: ast.BinOp) -> Value:
        if e.op in ("and", "or"):
            pair = self._expr(e.left), self._expr(e.right)
            if any(v.kind == "tile" for v in pair):
                return predicate_binop(self, e, *pair)
            lhs = self._coerce(self._expr(e.left), Arg(e.op, "bool"), e.left)
            rhs = self._coerce(self._expr(e.right), Arg(e.op, "bool"), e.right)
            if lhs.is_const and rhs.is_const:
                return Value("bool", e.span, const=(lhs.const and rhs.const) if e.op == "and"
                             else (lhs.const or rhs.const))
            cls = arith.AndIOp if e.op == "and" else arith.OrIOp
            return self._emit_bool(cls(self._i1(lhs), self._i1(rhs)), e.span)
        lhs, rhs = self._expr(e.left), self._expr(e.right)
        if {"tile", "tmem"} & {lhs.kind, rhs.kind}:  # a TMEM accumulator reads as a tile
            return tile_binop(self, e, lhs, rhs)
        for v, n in ((lhs, e.left), (rhs, e.right)):
            if v.kind not in ("int", "float"):
                raise error("CAKE-T007", f"operator `{e.op}` expects numbers, got "
                            f"{describe(v)}", n.span, notes=decl_note(v))
        is_float = "float" in (lhs.kind, rhs.kind)
        if e.op in _CMP:
            if lhs.is_const and rhs.is_const:
                return Value("bool", e.span, const=_PYCMP[e.op](lhs.const, rhs.const))
            if is_float:
                raise error("CAKE-T007", "runtime float comparisons are not supported", e.span)
            return self._emit_bool(_compare(self._i32(lhs), self._i32(rhs), _CMP[e.op]),
                                   e.span)
        if lhs.is_const and rhs.is_const:
            return self._fold(e, lhs, rhs, is_float)
        if is_float:
            if e.op not in _FARITH:
                raise error("CAKE-T007", f"operator `{e.op}` is not defined on floats", e.span)
            op = _FARITH[e.op](self._f32(lhs), self._f32(rhs))
            self._add(op, e.span)
            return Value("float", e.span, ssa=op.result)
        if e.op not in _ARITH:
            raise error("CAKE-T007", f"operator `{e.op}` is not defined on integers", e.span,
                        help="use `//` for integer division" if e.op == "/" else None)
        if e.op in ("//", "%") and rhs.is_const and rhs.const == 0:
            raise error("CAKE-T010", "division by zero", e.right.span)
        op = _arith_op(_ARITH[e.op], self._i32(lhs), self._i32(rhs))
        self._add(op, e.span)
        return Value("int", e.span, ssa=op.result)

    def _fold(self, e: ast.BinOp, lhs: Value, rhs: Value, is_float: bool) -> Value:
        a, b = lhs.const, rhs.const
        if e.op in ("//", "%", "/") and b == 0:
            raise error("CAKE-T010", "division by zero", e.right.span)
        if e.op == "/" and not is_float:
            raise error("CAKE-T007", "`/` is float division; integers use `//`", e.span)
        if e.op == "**" and (is_float or b < 0 or b > 64):
            raise error("CAKE-T010", "`**` takes a non-negative integer exponent up to 64",
                        e.span)
        r = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: a // b,
             "%": lambda: a % b, "/": lambda: a / b, "**": lambda: a ** b}[e.op]()
        if not is_float and abs(r) > 2**62:
            raise error("CAKE-T010", "integer constant too large", e.span)
        return Value("float" if is_float else "int", e.span, const=r)

    def _unary(self, e: ast.UnaryOp) -> Value:
        v = self._expr(e.operand)
        if e.op == "not":
            v = self._coerce(v, Arg("not", "bool"), e.operand)
            if v.is_const:
                return Value("bool", e.span, const=not v.const)
            return self._emit_bool(arith.XOrIOp(self._i1(v), self._i1(
                Value("bool", e.span, const=True))), e.span)
        if v.kind in ("tile", "tmem") and e.op == "-":
            return unary(self, "neg", "unary `-`", v, e.span, e.operand.span)
        if v.kind not in ("int", "float"):
            raise error("CAKE-T007", f"unary `{e.op}` expects a number, got {describe(v)}",
                        e.operand.span)
        if e.op == "+":
            return v
        if v.is_const:
            return Value(v.kind, e.span, const=-v.const)
        zero = Value(v.kind, e.span, const=0)
        return self._binop_values("-", zero, v, e.span)

    def _binop_values(self, op: str, lhs: Value, rhs: Value, span: Span) -> Value:
        if lhs.kind == "float" or rhs.kind == "float":
            o = _FARITH[op](self._f32(lhs), self._f32(rhs))
            self._add(o, span)
            return Value("float", span, ssa=o.result)
        o = _arith_op(_ARITH[op], self._i32(lhs), self._i32(rhs))
        self._add(o, span)
        return Value("int", span, ssa=o.result)

    def _ifexp(self, e: ast.IfExp) -> Value:
        cond = self._coerce(self._expr(e.cond), Arg("condition", "bool"), e.cond)
        a, b = self._expr(e.then), self._expr(e.orelse)
        if cond.is_const:
            return a if cond.const else b
        if a.kind != "int" or b.kind != "int":
            raise error("CAKE-T007", "a runtime conditional expression must choose between "
                        "integers", e.span)
        op = arith.SelectOp(self._i1(cond), self._i32(a), self._i32(b))
        self._add(op, e.span)
        return Value("int", e.span, ssa=op.result)

    def _emit_bool(self, op: Operation, span: Span) -> Value:
        self._add(op, span)
        return Value("bool", span, ssa=op.results[0])

    # ---- materialisation --------------------------------------------------------------------

    def _i32(self, v: Value) -> SSAValue:
        if v.ssa is not None:
            return v.ssa
        if not -_I32_MAX - 1 <= int(v.const) <= _I32_MAX:  # every device integer is an i32
            raise error("CAKE-T010", f"integer constant {int(v.const)} does not fit in 32 bits",
                        v.span, help="kernel arithmetic is on 32-bit signed integers "
                        f"(-{_I32_MAX + 1} to {_I32_MAX})")
        op = _constant(integer_attr(int(v.const), i32))
        self._add(op, v.span)
        return op.result

    def _i1(self, v: Value) -> SSAValue:
        if v.ssa is not None:
            return v.ssa
        op = _constant(integer_attr(int(bool(v.const)), i1))
        self._add(op, v.span)
        return op.result

    def _f32(self, v: Value) -> SSAValue:
        if v.ssa is not None and v.kind == "float":
            return v.ssa
        if v.ssa is not None:
            op = arith.SIToFPOp(v.ssa, f32)
        else:
            from xdsl.dialects.builtin import FloatAttr
            op = arith.ConstantOp(FloatAttr(float(v.const), f32))
        self._add(op, v.span)
        return op.results[0]

    def int_extremum(self, kind: str, e: ast.Call, a: Value, b: Value) -> Value:
        """`lm.min`/`lm.max` of two integers (folded when both are constants)."""
        for v, (i, n) in ((a, (0, "a")), (b, (1, "b"))):
            self._coerce(v, Arg(n, "scalar"), e.args[i] if i < len(e.args) else next(
                kw.value for kw in e.kwargs if kw.name == n))
        return _int_binary(arith.MinSIOp if kind == "min" else arith.MaxSIOp,
                           min if kind == "min" else max)(self, e, {"a": a, "b": b}, None)

    def note_tensor_dtype(self, tensor: Value, dtype: str, span: Span) -> None:
        prev = self.tensor_dtypes.get(tensor.ssa)
        if prev is not None and prev[0] != dtype:
            raise error("CAKE-D001", f"tensor `{tensor.info['name']}` is used as {dtype} here "
                        f"but as {prev[0]} elsewhere", span,
                        notes=[Note(prev[1], f"used as {prev[0]} here")])
        self.tensor_dtypes.setdefault(tensor.ssa, (dtype, span))


#: The kind of value each literal denotes
_LITERALS = {ast.IntLit: "int", ast.FloatLit: "float", ast.BoolLit: "bool", ast.StrLit: "str"}

#: What builds each kind of expression: one lookup by class, not a chain of isinstance tests
#: (the frontend evaluates ~300 expressions per GEMM example)
_EXPRS: dict[type, Callable[[Frontend, Any], Value]] = {
    **{cls: Frontend._literal for cls in _LITERALS},
    ast.Name: Frontend._name, ast.SizeLit: Frontend._size, ast.NoneLit: Frontend._none,
    ast.TupleLit: Frontend._sequence, ast.ListLit: Frontend._sequence,
    ast.Attribute: Frontend._attribute, ast.Call: Frontend._call,
    ast.Subscript: Frontend._subscript, ast.BinOp: Frontend._binop,
    ast.UnaryOp: Frontend._unary, ast.IfExp: Frontend._ifexp,
}


# ---- builders per builtin ------------------------------------------------------------------


def _key(spec: Builtin, recv: Value | None) -> str:
    return f"{recv.kind}.{spec.name}" if recv is not None else spec.name


def _props(**kw: Any) -> dict[str, Any]:
    out = {}
    for k, v in kw.items():
        if isinstance(v, bool):
            out[k] = integer_attr(int(v), i64)
        elif isinstance(v, int):
            out[k] = integer_attr(v, i64)
        elif isinstance(v, str):
            out[k] = string_attr(v)
        else:
            out[k] = v
    return out


def _resource(fe: Frontend, op: Operation, e: ast.Call, kind: str, **info: Any) -> Value:
    fe._add(op, e.span)
    return Value(kind, e.span, ssa=op.results[0], info=info)


def _build_smem(fe, e, b, recv):
    op = cake.SmemOp.build(properties=_props(sym_name="", bytes=b["bytes"].const),
                           result_types=[unit_type(cake.PoolType)])
    return _resource(fe, op, e, "pool", bytes=b["bytes"].const)


def _build_view(fe, e, b, recv):
    shape, dtype, stages = b["shape"].const, b["dtype"].const, b["stage"].const
    swz = b["swizzle"].const
    reuses = b["reuses"]
    op = cake.ViewOp.build(operands=[recv.ssa, [reuses.ssa] if reuses else []], properties=_props(
        sym_name="", offset=b["offset"].const),
        result_types=[view_type(shape, cake.dtype_attr(dtype), stages, swz)])
    return _resource(fe, op, e, "view", stages=stages, shape=shape, dtype=dtype)


def _build_tmem(fe, e, b, recv):
    shape, dtype = b["shape"].const, b["dtype"].const
    op = cake.TmemOp.build(properties=_props(sym_name="", cols=b["cols"].const,
                                             width=b["width"].const),
                           result_types=[cake.TmemType(shape, cake.dtype_attr(dtype))])
    return _resource(fe, op, e, "tmem", shape=shape, dtype=dtype)


def _build_regs(fe, e, b, recv):
    shape, dtype = b["shape"].const, b["dtype"].const
    op = cake.RegsOp.build(operands=[b["role"].ssa], properties=_props(sym_name=""),
                           result_types=[tile_type(shape, cake.dtype_attr(dtype))])
    return _resource(fe, op, e, "tile", shape=shape, dtype=dtype)


def _build_role(fe, e, b, recv):
    warps = b["warps"].const
    if not warps:
        raise error("CAKE-T010", "a role needs at least one warp", b["warps"].span,
                    help="list the warps that run the role, e.g. `warps=[0]`")
    repeated = sorted({w for w in warps if warps.count(w) > 1})
    if repeated:
        raise error("CAKE-T010", f"warp {repeated[0]} is listed twice in this role",
                    b["warps"].span, help="list each warp of the role once")
    props = _props(sym_name="", warps=i64_array(warps))
    if b["regs"] is not None:
        props["regs"] = integer_attr(b["regs"].const, i64)
    op = cake.RoleOp.build(properties=props, result_types=[unit_type(cake.RoleType)])
    return _resource(fe, op, e, "role", warps=warps)


def _build_pipeline(fe, e, b, recv):
    op = cake.PipelineOp.build(properties=_props(sym_name="", stages=b["stages"].const),
                               result_types=[unit_type(cake.PipelineType)])
    return _resource(fe, op, e, "pipeline", stages=b["stages"].const)


def _build_barrier(fe, e, b, recv):
    pipe = b["pipeline"]
    op = cake.BarrierOp.build(
        operands=[[r.ssa for r in b["prod"].const], [r.ssa for r in b["cons"].const],
                  [pipe.ssa] if pipe is not None else []],
        properties=_props(sym_name="", count=b["count"].const, init_count=b["init_count"].const),
        result_types=[unit_type(cake.BarrierType)])
    return _resource(fe, op, e, "barrier", count=b["count"].const)


def _build_grid(fe, e, b, recv):
    dims = b["*"]
    if not 1 <= len(dims) <= 3:
        raise error("CAKE-T013", "`lm.grid` takes 1 to 3 dimensions", e.span)
    for d in dims:
        if d.is_const and d.const < 1:
            raise error("CAKE-T010", "grid dimensions must be at least 1", d.span)
    fe._add(cake.GridOp.build(operands=[[fe._i32(d) for d in dims]]), e.span)
    return Value("none", e.span)


def _dim_builtin(cls):
    def build(fe, e, b, recv):
        dim = b["dim"].const
        if dim > 2:
            raise error("CAKE-T010", "grid dimension must be 0, 1 or 2", b["dim"].span)
        op = cls.build(properties=_props(dim=dim), result_types=[i32])
        fe._add(op, e.span)
        return Value("int", e.span, ssa=op.result)
    return build


def _build_cluster_rank(fe, e, b, recv):
    _needs_cluster(fe, e.span, "`lm.cluster_rank()`")
    op = cake.ClusterRankOp.build(result_types=[i32])
    fe._add(op, e.span)
    return Value("int", e.span, ssa=op.result)


def _build_cluster_sync(fe, e, b, recv):
    _needs_cluster(fe, e.span, "`lm.cluster_sync()`")
    fe._add(cake.ClusterSyncOp.build(), e.span)
    return Value("none", e.span)


def _check_cluster_sync(body: Block, spans: dict[Operation, Span]) -> None:
    """`lm.cluster_sync()` is the kernel's exit rendezvous: once, after every role block."""
    ops = list(body.ops)
    syncs = [i for i, op in enumerate(ops) if isinstance(op, cake.ClusterSyncOp)]
    late = [op for op in ops[syncs[0]:] if isinstance(op, cake.OnRoleOp)] if syncs else []
    if len(syncs) > 1 or late:
        where = ops[syncs[1]] if len(syncs) > 1 else late[0]
        raise error("CAKE-T011", "`lm.cluster_sync()` is the kernel's exit rendezvous: write "
                    "it once, after the last role block" + ("" if len(syncs) > 1 else
                                                           ", but a role block follows it"),
                    spans[ops[syncs[0]]],
                    notes=[Note(_start(spans[where]), "this comes after it")],
                    help="move `lm.cluster_sync()` to the end of the kernel")


def _needs_cluster(fe, span: Span, what: str) -> tuple[int, int, int]:
    if fe.cluster is None:
        raise error("CAKE-T010", f"{what} needs a thread-block cluster, and this kernel "
                    "declares none", span,
                    help="declare one with `@cake.schedule(..., cluster=(2, 1, 1))`")
    return fe.cluster


def _multicast_axes(fe, b: dict, span: Span) -> dict:
    """`multicast=axes`: the cluster axes (0 = x, 1 = y, 2 = z) whose blocks share the
    copy or the arrival, as the op's `multicast` property (none when not given)."""
    v = b.get("multicast")
    if v is None:
        return {}
    cluster = _needs_cluster(fe, v.span, "`multicast=`")
    axes = tuple(v.const)
    for a in axes:
        if a > 2 or cluster[a] < 2:
            raise error("CAKE-T010", f"`multicast` axis {a} is not an axis of the cluster "
                        f"{cluster} with more than one block", v.span,
                        help="name the axes along which the blocks share the data, e.g. "
                        "`multicast=0` for the blocks along x")
    if not axes or len(set(axes)) != len(axes):
        raise error("CAKE-T010", "`multicast` needs one or more distinct cluster axes", v.span)
    return {"multicast": i64_array(sorted(axes))}


def _cluster_shape(v: ast.Expr) -> tuple[int, int, int]:
    """`cluster=(x, y, z)` (or `cluster=x`, `cluster=(x, y)`): positive integer literals,
    padded with 1s to three axes."""
    items = v.items if isinstance(v, ast.TupleLit) else (v,)
    if not 1 <= len(items) <= 3 or not all(isinstance(i, ast.IntLit) and i.value >= 1
                                          for i in items):
        raise error("CAKE-T007", "`cluster` must be 1 to 3 positive integer literals such as "
                    "(2, 1, 1)", v.span,
                    help="the blocks of a thread-block cluster along x, y and z")
    dims = [i.value for i in items] + [1] * (3 - len(items))
    return dims[0], dims[1], dims[2]


def _build_sm_count(fe, e, b, recv):
    op = cake.SmCountOp.build(result_types=[i32])
    fe._add(op, e.span)
    return Value("int", e.span, ssa=op.result)


def _int_binary(op_cls, fold):
    def build(fe, e, b, recv):
        x, y = b["a"], b["b"]
        if fold is _cdiv and y.is_const and y.const == 0:
            raise error("CAKE-T010", "division by zero", y.span)
        if x.is_const and y.is_const:
            return Value("int", e.span, const=fold(x.const, y.const))
        op = _arith_op(op_cls, fe._i32(x), fe._i32(y))
        fe._add(op, e.span)
        return Value("int", e.span, ssa=op.result)
    return build


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _sync_op(cls):
    def build(fe, e, b, recv):
        fe._add(cls.build(operands=[b["barrier"].ssa, fe._i32(b["stage"])],
                          properties=_multicast_axes(fe, b, e.span)), e.span)
        return Value("none", e.span)
    return build


def _build_skip(fe, e, b, recv):
    count = b["count"]
    fe._add(cake.SkipOp.build(operands=[b["barrier"].ssa, fe._i32(b["stage"]), fe._i32(count)]),
            e.span)
    return Value("none", e.span)


def _build_fence(fe, e, b, recv):
    fe._add(cake.FenceProxyOp.build(), e.span)
    return Value("none", e.span)


def _build_mma(fe, e, b, recv):
    fe._add(cake.MmaOp.build(operands=[b["acc"].ssa, b["a"].ssa, b["b"].ssa, fe._i1(b["init"])]),
            e.span)
    return Value("none", e.span)


def _build_tma_load(fe, e, b, recv, op_cls=cake.TmaLoadOp):
    tensor, coords = b["tensor"], b["coords"].const
    if op_cls is cake.TmaLoadOp and not tensor.info.get("tma"):
        raise error("CAKE-T007", f"`{tensor.info['name']}` is not a TMA tensor", e.span,
                    notes=[Note(tensor.span, "declared here")],
                    help=f"declare it as `LM.tma{tensor.info['rank']}d`")
    if len(coords) != tensor.info["rank"]:
        raise error("CAKE-T013", f"`coords` has {len(coords)} entries but tensor "
                    f"`{tensor.info['name']}` has rank {tensor.info['rank']}", b["coords"].span,
                    notes=[Note(tensor.span, "declared here")])
    fe.note_tensor_dtype(tensor, recv.info["dtype"], e.span)
    stage = b["stage"]
    if stage.is_const and not 0 <= stage.const < recv.info["stages"]:
        raise error("CAKE-S008", f"stage {stage.const} is out of range for view "
                    f"`{recv.info.get('name')}` with {recv.info['stages']} stage(s)", stage.span,
                    notes=[Note(recv.span, f"`{recv.info.get('name')}` is declared here")])
    props = {}
    fill = b.get("fill")
    if fill is not None and fill.const == "nan":
        if recv.info["dtype"] not in _NAN_DTYPES:
            raise error("CAKE-D002", f"fill=lm.nan needs a floating-point view; "
                        f"`{recv.info.get('name')}` is {recv.info['dtype']}", fill.span,
                        notes=[Note(recv.span, f"`{recv.info.get('name')}` is declared here")],
                        help="integer tiles can only be zero-filled (omit `fill=`)")
        props["fill"] = string_attr("nan")
    props |= _multicast_axes(fe, b, e.span)
    fe._add(op_cls.build(operands=[recv.ssa, tensor.ssa, [fe._i32(c) for c in coords],
                                   fe._i32(stage), b["barrier"].ssa], properties=props), e.span)
    return Value("none", e.span)


#: View dtypes TMA can fill with NaN outside the tensor.
_NAN_DTYPES = ("f32", "tf32", "bf16", "f16")


def _build_tma_store(fe, e, b, recv):
    coords = b["coords"].const
    if len(coords) != recv.info["rank"]:
        raise error("CAKE-T013", f"`coords` has {len(coords)} entries but tensor "
                    f"`{recv.info['name']}` has rank {recv.info['rank']}", b["coords"].span)
    value = b["value"]
    if value.kind == "stage":  # a staged SMEM tile, copied out by TMA
        if not recv.info.get("tma"):
            raise error("CAKE-T007", f"`{recv.info['name']}` is not a TMA tensor: a stage is "
                        "stored by TMA", e.span, notes=[Note(recv.span, "declared here")],
                        help=f"declare it as `LM.tma{recv.info['rank']}d`")
        fe.note_tensor_dtype(recv, cake.dtype_name(value.ssa.type.element_type), e.span)
        fe._add(cake.TmaStoreStageOp.build(operands=[recv.ssa, value.ssa,
                                                     [fe._i32(c) for c in coords]]), e.span)
        return Value("none", e.span)
    fe.note_tensor_dtype(recv, cake.dtype_name(value.ssa.type.element_type), e.span)
    fe._add(cake.TmaStoreOp.build(operands=[recv.ssa, value.ssa,
                                            [fe._i32(c) for c in coords]]), e.span)
    return Value("none", e.span)


def _build_convert(fe, e, b, recv):
    src_t = recv.ssa.type
    op = cake.ConvertOp.build(operands=[recv.ssa], result_types=[
        tile_type(src_t.dims(), cake.dtype_attr(b["dtype"].const))])
    fe._add(op, e.span)
    return Value("tile", e.span, ssa=op.result, info={"shape": src_t.dims(),
                                                       "dtype": b["dtype"].const})


_BUILD = {
    "smem": _build_smem, "pool.view": _build_view, "tmem": _build_tmem, "regs": _build_regs,
    "role": _build_role, "pipeline": _build_pipeline, "barrier": _build_barrier,
    "grid": _build_grid, "block_id": _dim_builtin(cake.BlockIdOp),
    "num_blocks": _dim_builtin(cake.NumBlocksOp), "sm_count": _build_sm_count,
    "cluster_rank": _build_cluster_rank, "cluster_sync": _build_cluster_sync,
    "cdiv": _int_binary(arith.CeilDivSIOp, _cdiv), "min": _int_binary(arith.MinSIOp, min),
    "max": _int_binary(arith.MaxSIOp, max), "wait": _sync_op(cake.WaitOp),
    "skip": _build_skip, "arrive": _sync_op(cake.ArriveOp), "commit": _sync_op(cake.CommitOp),
    "fence_proxy": _build_fence, "mma": _build_mma, "view.tma_load": _build_tma_load,
    "view.copy_load": lambda fe, e, b, recv: _build_tma_load(fe, e, b, recv, cake.CopyLoadOp),
    "tensor.tma_store": _build_tma_store, "tile.to": _build_convert, "tmem.to": _build_convert,
    **TILE_BUILDERS,
}


# ---- small helpers ---------------------------------------------------------------------------


def _any_call(e: ast.Expr, lm: str) -> ast.Call | None:
    """`lm.any(...)` when it is the whole condition `e` of an `if`."""
    if (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "any"
            and isinstance(e.func.value, ast.Name) and e.func.value.id == lm):
        return e
    return None


def _register_arithmetic(op: Operation) -> bool:
    """What a per-warp branch may hold: scalar and register-tile arithmetic, row reductions
    and register-tile assignments (no MMA, barrier, copy, memory access, loop or branch)."""
    return (op.dialect_name() == "arith"
            or isinstance(op, (*cake.PURE_TILE_OPS, cake.TileReduceOp, cake.TileAssignOp)))


def _op_label(op: Operation) -> str:
    return op.name.removeprefix("cake.")


def _start(span: Span) -> Span:
    """Block statements' spans run to the next statement; diagnostics use their start."""
    return Span(span.file, span.line, span.col)


def _callee(e: ast.Call) -> str:
    f = e.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return f"{f.value.id}.{f.attr}"
    if isinstance(f, ast.Attribute):
        return f".{f.attr}"
    return "call"


def _kw_span(kw: ast.Keyword) -> Span:
    return Span(kw.span.file, kw.span.line, kw.span.col, kw.span.line, kw.span.col + len(kw.name))


def _items(node: ast.Expr) -> tuple[ast.Expr, ...]:
    if isinstance(node, (ast.TupleLit, ast.ListLit)):
        return node.items
    return (node,)


def _show(v: Value) -> str:
    if v.kind == "size":
        return f"`{v.info['text']}`"
    if v.kind in ("str",):
        return repr(v.const)
    if v.is_const:
        return f"`{v.const}`"
    return describe(v)


def _default_kind(a: Arg) -> str:
    return {"scalar": "int", "int": "int", "bool": "bool", "swizzle": "swizzle"}.get(a.kind,
                                                                                    a.kind)


def _scopes(s: Scope | None):
    while s is not None:
        yield s
        s = s.parent



def _refuse_regs_alias(target: ast.Name, v: Value, span: Span) -> None:
    """`p = m` for a declared `lm.regs` tile `m` would make `p` a second name of `m`'s
    registers, so a later `m = ...` would change what `p` reads (test/lit/frontend/
    regs_alias.cake: a kernel that kept the row max of the tile before this way stored the
    next tile's); CAKE-T016 with the copy to write instead."""
    owner = getattr(v.ssa, "owner", None)
    if v.kind != "tile" or not isinstance(owner, cake.RegsOp) or not owner.sym_name.data:
        return
    m = owner.sym_name.data
    zero = "0" if cake.dtype_name(v.ssa.type.element_type) == "i32" else "0.0"
    raise error("CAKE-T016", f"`{target.id} = {m}` would name the register tile `{m}` again, "
                f"not copy it: a later assignment to `{m}` would change `{target.id}`", span,
                notes=decl_note(v),
                help=f"copy its current value with `{target.id} = {m} + {zero}`")
