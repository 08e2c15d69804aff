"""Compiler diagnostics: spans, the diagnostic record, a collecting sink, and the
text (clang/rustc style) and JSON renderers.

Every stage of cakec reports through this module, so one root cause gives one
`path:line:col: error: message [CODE]` with the source line, a caret under the
span, `note:` lines at the related places and a `help:` line with the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Literal

Severity = Literal["error", "warning", "note"]


@dataclass(frozen=True)
class SourceFile:
    """A named source text (a path, or `<stdin>`), kept for rendering lines."""

    path: str
    text: str

    def line(self, lineno: int) -> str:
        lines = self._lines
        return lines[lineno - 1] if 1 <= lineno <= len(lines) else ""

    @cached_property
    def _lines(self) -> list[str]:
        # split once: the emitter asks for the source line of every block it writes
        return self.text.splitlines()


@dataclass(frozen=True)
class Span:
    """A 1-based, end-exclusive source range; `end_col == 0` means 'one token', `line == 0`
    the whole file."""

    file: str
    line: int
    col: int
    end_line: int = 0
    end_col: int = 0

    def __init__(self, file: str, line: int, col: int, end_line: int = 0,
                 end_col: int = 0) -> None:
        # The fields go straight into the instance dict: a frozen dataclass's own __init__
        # sets each through object.__setattr__, 2.6x the time, and the parser and the
        # frontend make ~500 spans per GEMM verify.
        d = self.__dict__
        d["file"], d["line"], d["col"], d["end_line"], d["end_col"] = (
            file, line, col, end_line, end_col)

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}" if self.line > 0 else self.file


@dataclass(frozen=True)
class Note:
    span: Span | None
    message: str


@dataclass
class Diagnostic:
    severity: Severity
    code: str
    message: str
    span: Span | None
    notes: list[Note] = field(default_factory=list)
    help: str | None = None

    def to_json(self) -> dict:
        """One entry of `--format json`'s `diagnostics` (docs/diagnostics.md): notes carry
        the same position fields as the diagnostic, so a tool can underline them too."""
        return {
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            **span_position(self.span),
            "notes": [{"message": n.message, **span_position(n.span)} for n in self.notes],
            "help": self.help,
        }


def span_position(s: Span | None) -> dict:
    """file, line, col and the end-exclusive end_line/end_col (one column if unknown)."""
    if s is None or s.line <= 0:  # no place, or a whole file (line 0: one that cannot be read)
        return {"file": s.file if s else None, "line": None, "col": None, "end_line": None,
                "end_col": None}
    one_line = s.end_line in (0, s.line)
    return {"file": s.file, "line": s.line, "col": s.col, "end_line": s.end_line or s.line,
            "end_col": s.end_col if s.end_col and (s.end_col > s.col or not one_line)
            else s.col + 1}


class CompileError(Exception):
    """Raised to abandon the construct being processed once its diagnostic is filed.

    Callers catch it at statement granularity so that independent errors in
    later statements are still reported (no cascades, no early exit).
    """

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def error(code: str, message: str, span: Span | None, *, notes: Iterable[Note] = (),
          help: str | None = None) -> CompileError:
    return CompileError(Diagnostic("error", code, message, span, list(notes), help))


class DiagnosticSink:
    """Collects diagnostics for one compilation, dropping exact duplicates."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[tuple] = set()

    def report(self, diag: Diagnostic) -> None:
        key = (diag.code, diag.message, diag.span)
        if key not in self._seen:
            self._seen.add(key)
            self.diagnostics.append(diag)

    def error(self, code: str, message: str, span: Span | None, *, notes: Iterable[Note] = (),
              help: str | None = None) -> None:
        self.report(Diagnostic("error", code, message, span, list(notes), help))

    def warning(self, code: str, message: str, span: Span | None, *,
                notes: Iterable[Note] = (), help: str | None = None) -> None:
        self.report(Diagnostic("warning", code, message, span, list(notes), help))

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def _underline(src_line: str, span: Span) -> str:
    start = max(span.col - 1, 0)
    if span.end_line in (0, span.line) and span.end_col > span.col:
        width = span.end_col - span.col
    else:
        # Unknown or multi-line end: underline the identifier/number at the caret.
        width = 1
        while start + width < len(src_line) and (src_line[start + width].isalnum()
                                                 or src_line[start + width] == "_"):
            width += 1
        if not (src_line[start:start + 1].isalnum() or src_line[start:start + 1] == "_"):
            width = 1
    prefix = "".join(c if c == "\t" else " " for c in src_line[:start])
    return prefix + "^" + "~" * (width - 1)


#: ANSI styles of the coloured rendering (rustc's palette): the severity word and the caret
#: in the severity's colour, the place and the message in bold.
_STYLE = {"error": "1;31", "warning": "1;33", "note": "1;36", "help": "1;32", "bold": "1"}


def _paint(text: str, style: str, color: bool) -> str:
    return f"\x1b[{_STYLE[style]}m{text}\x1b[0m" if color and text else text


def render_text(diags: Iterable[Diagnostic], sources: dict[str, SourceFile],
                color: bool = False) -> str:
    """clang/rustc-style text; `color` adds ANSI styles (the CLI decides: --color, NO_COLOR)."""
    out: list[str] = []
    for d in diags:
        where = _paint(f"{d.span}: " if d.span else "", "bold", color)
        out.append(f"{where}{_paint(d.severity + ':', d.severity, color)} "
                   f"{_paint(f'{d.message} [{d.code}]', 'bold', color)}")
        out.extend(_snippet(d.span, sources, d.severity, color))
        for n in d.notes:
            where = _paint(f"{n.span}: " if n.span else "", "bold", color)
            out.append(f"{where}{_paint('note:', 'note', color)} {n.message}")
            out.extend(_snippet(n.span, sources, "note", color))
        if d.help:
            out.append(f"{_paint('help:', 'help', color)} {d.help}")
    return "\n".join(out) + ("\n" if out else "")


def _snippet(span: Span | None, sources: dict[str, SourceFile], severity: str = "error",
             color: bool = False) -> list[str]:
    if span is None or span.file not in sources:
        return []
    line = sources[span.file].line(span.line)
    if not line and span.line <= 0:
        return []
    caret = _underline(line, span)
    marks = len(caret) - len(caret.lstrip())
    return [line, caret[:marks] + _paint(caret[marks:], severity, color)]


def render_json(diags: Iterable[Diagnostic], **fields: object) -> str:
    """The one JSON document a `--format json` command prints on stdout (docs/diagnostics.md):
    `{"diagnostics": [...]}` plus the command's own fields (`output` for emit and opt)."""
    import json  # only the JSON path pays for it

    return json.dumps({"diagnostics": [d.to_json() for d in diags], **fields}, indent=2)
