"""Where each name of a .cake file is declared, read from the syntax tree alone.

Go-to-definition and hover must work while the kernel is still wrong (the editor is
mid-edit), so this needs only the syntax tree the driver parsed: every kernel parameter, assignment target and
loop variable becomes a `Definition`, with the kind its builtin returns (`lm.role` → role,
`pool.view` → view, ...). A name used inside a kernel resolves to its latest definition
at or above the use (roles re-assign loop locals such as `s` in each `with` block), else
to the first one below it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cakec.diagnostics import SourceFile, Span
from cakec.frontend import ast


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # role, barrier, view, pool, tmem, pipeline, tile, param, value, loop
    span: Span  # the declared name itself
    kernel: str


@dataclass(frozen=True)
class Kernel:
    name: str
    first_line: int  # its first decorator
    definitions: tuple[Definition, ...]


@dataclass(frozen=True)
class Symbols:
    kernels: tuple[Kernel, ...]

    @staticmethod
    def of(tree: ast.Module | None) -> "Symbols":
        """The kernels of a parsed file and their definitions; none when it did not parse."""
        if tree is None:
            return Symbols(())
        return Symbols(tuple(_kernel(f) for f in tree.body if isinstance(f, ast.FuncDef)))

    def kernel_at(self, line: int) -> Kernel | None:
        """The kernel whose text (decorators included) holds 1-based `line`."""
        found = None
        for k in self.kernels:
            if k.first_line <= line:
                found = k
        return found

    def resolve(self, name: str, line: int) -> Definition | None:
        kernel = self.kernel_at(line)
        if kernel is None:
            return None
        defs = [d for d in kernel.definitions if d.name == name]
        above = [d for d in defs if d.span.line <= line]
        return above[-1] if above else (defs[0] if defs else None)


def _kernel(f: ast.FuncDef) -> Kernel:
    defs = [Definition(p.name, "param", p.span, f.name) for p in f.params]
    stack: list[ast.Stmt] = list(reversed(f.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Assign) and stmt.aug_op is None:
            kind = _kind(stmt.value) if len(stmt.targets) == 1 else "value"
            defs += [Definition(t.id, kind, t.span, f.name) for t in stmt.targets]
        elif isinstance(stmt, ast.For):
            defs.append(Definition(stmt.var.id, "loop", stmt.var.span, f.name))
        if isinstance(stmt, (ast.With, ast.For, ast.If)):
            stack.extend(reversed(stmt.body + getattr(stmt, "orelse", ())))
    defs.sort(key=lambda d: (d.span.line, d.span.col))
    first = min([f.span.line, *(d.span.line for d in f.decorators)])
    return Kernel(f.name, first, tuple(defs))


def _kind(value: ast.Expr) -> str:
    """What the builtin called on the right-hand side returns (builtins.py's kinds)."""
    from cakec.frontend.builtins import LM_FUNCTIONS, METHODS

    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)):
        return "value"
    attr = value.func.attr
    if isinstance(value.func.value, ast.Name) and value.func.value.id == "lm":
        builtin = LM_FUNCTIONS.get(attr)
    else:  # a resource method (pool.view, ...): the method name is unique enough to say
        builtin = next((m[attr] for m in METHODS.values() if attr in m), None)
    return (builtin.returns if builtin is not None and builtin.returns else "value")


def word_at(source: SourceFile, line: int, col: int) -> tuple[str, Span] | None:
    """The identifier under 1-based (line, col), and its span; a cursor just past the
    identifier's end still names it (editors put the caret after the word)."""
    text = source.line(line)
    i = col - 1
    if not (0 <= i <= len(text)):
        return None
    if i == len(text) or not _ident(text[i]):
        if i == 0 or not _ident(text[i - 1]):
            return None
        i -= 1
    start, end = i, i + 1
    while start > 0 and _ident(text[start - 1]):
        start -= 1
    while end < len(text) and _ident(text[end]):
        end += 1
    if text[start].isdigit():
        return None
    return text[start:end], Span(source.path, line, start + 1, line, end + 1)


def _ident(ch: str) -> bool:
    return ch.isalnum() or ch == "_"
