"""Cake: a verified schedule language and compiler for warp-specialized GPU kernels.

Python API (imports are lazy so `import cakec` stays cheap):
    cakec.verify(source_or_path, target=None) -> list[Diagnostic]
    cakec.compile(source_or_path, target=None) -> Kernel   (raises CakeCompileError)
    cakec.run(path, target=None, shape=None, ...) -> RunReport  (docs/run.md)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__version__ = "0.1.0"

if TYPE_CHECKING:
    from cakec.diagnostics import Diagnostic
    from cakec.feedback.report import RunReport
    from cakec.runtime import Kernel


def verify(source_or_path: str, target: str | None = None) -> list["Diagnostic"]:
    """Verify a .cake kernel given as a path or as source text; returns its diagnostics
    (an empty list means it verified)."""
    from cakec.driver import read_source, verify_source

    if "\n" in source_or_path or source_or_path.lstrip().startswith("@"):
        src = read_source("<string>", source_or_path)
    else:
        src = read_source(source_or_path)
    return verify_source(src, target).sink.diagnostics


def compile(source_or_path: str, target: str | None = None) -> "Kernel":
    """Verify, emit and build a .cake kernel (a path or source text) into a launchable
    `Kernel`; raises cakec.api.CakeCompileError with the diagnostics if it does not verify."""
    from cakec.api import compile as _compile

    return _compile(source_or_path, target)


def run(path: str, target: str | None = None, shape: str | None = None,
        **options: object) -> "RunReport":
    """What `cakec run PATH --json` does: every stage of the loop, one report (a dataclass;
    `.to_json()` is the document of docs/run.md). Options: see cakec.feedback.runner.run."""
    from cakec.feedback.runner import run as _run

    return _run(path, target, shape, **options)  # type: ignore[arg-type]
