"""The parts of the command line that need no click: reading the inputs, the `verify`
command's work, rendering diagnostics and what escapes a command as (text, exit status).

The click CLI (cakec/cli.py) and the `cakec` entry point's click-free `verify`
(cakec/__main__.py) both print what these return, so the two paths answer alike.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cakec.driver import Compilation
    from cakec.diagnostics import SourceFile

#: An input file that cannot be read: a diagnostic of its own, so the other files of the
#: command still get theirs, in text and in JSON (exit status 2).
UNREADABLE = "CAKE-P005"


def use_color(choice: str, is_tty: bool, environ: "dict[str, str] | os._Environ[str]") -> bool:
    """--color: `always`, `never`, or `auto` (a terminal, unless NO_COLOR is set non-empty,
    https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    return is_tty and not environ.get("NO_COLOR")


def load(path: str) -> "SourceFile | Compilation":
    """The source of `path`, or a failed Compilation carrying CAKE-P005 for it."""
    from cakec.driver import Compilation, read_source
    from cakec.errors import CakeReadError

    try:
        return read_source(path)
    except CakeReadError as e:
        from cakec.diagnostics import Diagnostic, SourceFile, Span

        comp = Compilation(SourceFile(path, ""))
        comp.sink.report(Diagnostic("error", UNREADABLE, f"cannot read the file: {e.why}",
                                    Span(path, 0, 0)))
        return comp


def verified(path: str, target: str | None) -> "Compilation":
    """`path` through the whole verify pipeline (or its CAKE-P005)."""
    from cakec.driver import Compilation, verify_source

    src = load(path)
    return src if isinstance(src, Compilation) else verify_source(src, target)


def report(comps: "list[Compilation]", fmt: str, color: bool,
           **json_fields: object) -> tuple[str | None, str, int]:
    """The compilations' diagnostics as (the JSON document for stdout, the text for stderr,
    the exit status they imply): with `fmt` json the document (with `json_fields`) and no
    text, else no document and their text, ANSI-styled if `color`."""
    from cakec.diagnostics import render_json, render_text

    diags = [d for c in comps for d in c.sink.diagnostics]
    unreadable = any(d.code == UNREADABLE for d in diags)
    status = 2 if unreadable else 1 if any(not c.ok for c in comps) else 0
    if fmt == "json":
        return render_json(diags, **json_fields), "", status
    sources = {k: v for c in comps for k, v in c.sources.items()}
    return None, render_text(diags, sources, color=color), status


def failure(e: Exception) -> tuple[str, int]:
    """What escaped a command, as (the text for stderr, the exit status): a CakeError is its
    one-line message, anything else a bug said so (CAKE-I001), never a traceback."""
    from cakec.errors import CakeCompileError, CakeError

    if isinstance(e, CakeCompileError):  # its text is the rendered diagnostics
        return str(e), e.exit_status
    if isinstance(e, CakeError):  # an NVRTC log, say: after the one-line summary
        first, *rest = str(e).splitlines() or [type(e).__name__]
        return "\n".join([f"cakec: error: {first}", *rest]), e.exit_status
    import traceback

    tb = traceback.extract_tb(e.__traceback__)
    where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
    return (f"cakec: error: internal compiler error: {type(e).__name__}: {e}{where} "
            "[CAKE-I001]\nhelp: this is a bug in cakec; please report it with the command "
            "line and input files"), 1
