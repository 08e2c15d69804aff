"""The compilation pipeline shared by the CLI and the Python API:
read → parse → frontend (IR) → pass pipeline (derive, gates) with one diagnostic sink.

Internal failures become a CAKE-I001 diagnostic naming the file, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from cakec.diagnostics import CompileError, Diagnostic, DiagnosticSink, SourceFile, Span
from cakec.errors import CakeReadError

if TYPE_CHECKING:  # xDSL is imported once a file parses: a syntax error never pays for it
    from xdsl.context import Context
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Operation

    from cakec.frontend.ast import Module


@dataclass
class Compilation:
    source: SourceFile
    sink: DiagnosticSink = field(default_factory=DiagnosticSink)
    module: ModuleOp | None = None
    spans: dict[Operation, Span] = field(default_factory=dict)
    target: str | None = None  # --target, if given
    ctx: Context | None = None
    tree: "Module | None" = None  # the .cake syntax tree, once parsed (the server reuses it)

    @property
    def ok(self) -> bool:
        return not self.sink.has_errors

    @property
    def sources(self) -> dict[str, SourceFile]:
        return {self.source.path: self.source}


def make_context(comp: Compilation | None = None) -> Context:
    ctx = _loaded_context().clone()
    if comp is not None:
        ctx.cake_sink = comp.sink  # type: ignore[attr-defined]
        ctx.cake_spans = comp.spans  # type: ignore[attr-defined]
        ctx.cake_target = comp.target  # type: ignore[attr-defined]
        ctx.cake_sources = comp.sources  # type: ignore[attr-defined]
    return ctx


@lru_cache(maxsize=1)
def _loaded_context() -> Context:
    """A context with Cake's dialects loaded, cloned for each compilation: loading them
    costs ~30 µs, a copy ~1 µs."""
    from xdsl.context import Context
    from xdsl.dialects.arith import Arith
    from xdsl.dialects.builtin import Builtin

    from cakec.dialects.cake import Cake

    ctx = Context()
    ctx.load_dialect(Builtin)
    ctx.load_dialect(Arith)
    ctx.load_dialect(Cake)
    return ctx


def read_source(path: str, text: str | None = None) -> SourceFile:
    """`-` reads stdin. Raises CakeReadError (an OSError) for a path that cannot be read as
    UTF-8 text: missing, a directory, empty, undecodable (the CLI reports CAKE-P005)."""
    if text is not None:
        return SourceFile(path, text)
    if path == "-":
        import sys

        return SourceFile("<stdin>", sys.stdin.read())
    if not path:
        raise CakeReadError(path, "the path is empty")
    try:
        return SourceFile(path, Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise CakeReadError(path, e.strerror or str(e), e.errno) from None
    except UnicodeDecodeError as e:
        raise CakeReadError(path, f"not UTF-8 text (byte {e.start})") from None


def _internal(comp: Compilation, exc: BaseException) -> None:
    import traceback  # only a compiler bug pays for it

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    origin = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    comp.sink.report(Diagnostic(
        "error", "CAKE-I001",
        f"internal compiler error while compiling {comp.source.path}: "
        f"{type(exc).__name__}: {exc}{origin}", None,
        help="this is a bug in cakec; please report it with the input file"))


def build(source: SourceFile, target: str | None = None) -> Compilation:
    """Parse and build IR (syntax, names and types)."""
    comp = Compilation(source, target=target)
    if target is not None:
        from cakec.targets.sku import SKUS

        if target not in SKUS:
            comp.sink.error("CAKE-T009", f"unknown target `{target}`", None,
                            help="known targets: " + ", ".join(SKUS))
            return comp
    tree = None
    try:
        if _is_mlir(source):
            comp.module = _parse_mlir(comp)
        else:
            from cakec.frontend.parser import parse

            tree = comp.tree = parse(source.text, source.path)
            from cakec.frontend.ir_builder import Frontend

            fe = Frontend(source.path, comp.sink)
            module = fe.build(tree)
            comp.spans = fe.spans
            if not comp.sink.has_errors:
                comp.module = module
    except CompileError as e:
        comp.sink.report(e.diagnostic)
    except RecursionError:
        # The parser is iterative; the recursive frontend overflows on very long operator
        # chains. Point at the statement that holds the deepest expression.
        comp.sink.error("CAKE-P004", "expression nesting too deep",
                        _deepest_statement(tree) if tree is not None
                        else Span(source.path, 1, 1),
                        help="split the expression into named parts")
    except Exception as e:  # noqa: BLE001 - reported as an internal error, never a traceback
        _internal(comp, e)
    return comp


def _is_mlir(source: SourceFile) -> bool:
    """A `.mlir` file, or MLIR text on stdin (so `cakec opt k.cake | cakec opt -` works);
    a .cake file never starts with a module."""
    if source.path.endswith(".mlir"):
        return True
    return source.path == "<stdin>" and source.text.lstrip().startswith(
        ("builtin.module", '"builtin.module"'))


def _deepest_statement(tree: object) -> Span:
    """Start of the simple statement whose expression tree is deepest (iterative walk)."""
    from cakec.frontend import ast

    best = (-1, Span("", 1, 1))
    stack: list[tuple[object, int, Span]] = [(tree, 0, Span("", 1, 1))]
    while stack:
        node, depth, where = stack.pop()
        if isinstance(node, tuple):
            stack.extend((item, depth, where) for item in node)
            continue
        if not is_dataclass(node) or isinstance(node, Span):
            continue
        if isinstance(node, (ast.Assign, ast.ExprStmt, ast.With, ast.For, ast.If)):
            where = Span(node.span.file, node.span.line, node.span.col)
        if depth > best[0]:
            best = (depth, where)
        stack.extend((getattr(node, f.name), depth + 1, where) for f in fields(node))
    return best[1]


def _parse_mlir(comp: Compilation) -> ModuleOp | None:
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError, VerifyException

    try:
        module = Parser(make_context(), comp.source.text, comp.source.path).parse_module()
        module.verify()
        return module
    except ParseError as e:
        span = e.span
        line = comp.source.text.count("\n", 0, span.start) + 1
        col = span.start - (comp.source.text.rfind("\n", 0, span.start) + 1) + 1
        comp.sink.error("CAKE-P010", f"invalid IR: {e.msg.strip() or 'parse error'}",
                        Span(comp.source.path, line, col))
    except VerifyException as e:
        op, why = _failing_op(module, e)
        comp.sink.error("CAKE-P010", f"invalid IR: `{op.name}`: {why}" if op else
                        f"invalid IR: {why}", _mlir_span(comp.source, op))
    return None


def _failing_op(module: ModuleOp, exc: Exception) -> tuple[Operation | None, str]:
    """xDSL's VerifyException does not name its op: find the first op that fails alone."""
    from xdsl.utils.exceptions import VerifyException

    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            return op, " ".join(str(e).split())
    return None, " ".join(str(exc).split())


def _mlir_span(source: SourceFile, op: Operation | None) -> Span:
    """Where the op's text starts in the .mlir file (its result names or its quoted name)."""
    if op is not None:
        needle = f'"{op.name}"'
        if op.results and op.results[0].name_hint:
            needle = f"%{op.results[0].name_hint} ="
        for n, text in enumerate(source.text.splitlines(), 1):
            col = -1 if text.lstrip().startswith("//") else text.find(needle)
            if col >= 0:
                return Span(source.path, n, col + 1)
    return Span(source.path, 1, 1)


def run_passes(comp: Compilation, pipeline: str) -> None:
    """Run a comma-separated pass pipeline (aliases allowed) on a built compilation."""
    if comp.module is None or not pipeline:
        return
    from cakec.passes import PASSES, expand

    spec = expand(pipeline)
    if not spec:
        return
    try:
        passes = _pipeline(spec)
    except Exception as e:  # noqa: BLE001 - unknown names/options are usage errors
        raise ValueError(f"invalid pass pipeline `{pipeline}`: {e}; available: "
                         + ", ".join(sorted(PASSES))) from None
    from cakec.passes.derive_common import shared_walks

    ctx = make_context(comp)
    comp.ctx = ctx
    try:
        with shared_walks():
            for p in passes.passes:
                # Gates reason about derived facts: after a failed derivation they would only
                # repeat its error. Independent gates all run, so their errors surface together.
                p.apply(ctx, comp.module)
                if comp.sink.has_errors and not p.name.startswith("verify-"):
                    break
    except CompileError as e:
        comp.sink.report(e.diagnostic)
    except Exception as e:  # noqa: BLE001
        _internal(comp, e)


@lru_cache(maxsize=32)
def _pipeline(spec: str):
    """Parsed pipelines are reused: passes are frozen dataclasses, and parsing the spec
    costs as much as a small derive pass."""
    from xdsl.passes import PassPipeline

    from cakec.passes import PASSES

    return PassPipeline.parse_spec(PASSES, spec)


def verify_source(source: SourceFile, target: str | None = None) -> Compilation:
    """Everything `cakec verify` does for one file (with fewer young garbage collections:
    cakec/collector.py)."""
    from cakec.collector import fewer_collections

    with fewer_collections():
        comp = build(source, target)
        if comp.ok:
            run_passes(comp, "verify")
    return comp
