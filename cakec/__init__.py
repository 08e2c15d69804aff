"""Cake: a verified schedule language and compiler for warp-specialized GPU kernels.

Python API (imports are lazy so `import cakec` stays cheap):
    cakec.verify(path=None, target=None, *, source=None) -> list[Diagnostic]
    cakec.compile(path=None, target=None, *, source=None) -> Kernel
    cakec.run(path, target=None, shape=None, ...) -> RunReport  (docs/run.md)
A kernel is a path (`str` or `os.PathLike`) or, with `source=`, .cake text. Every exception
raised on purpose is a `cakec.CakeError` (the hierarchy: cakec/errors.py, docs/abi.md).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from cakec import codecache, xdslhooks

codecache.install()  # before anything defines a dataclass (xDSL: ~100 ms of a fresh process)
xdslhooks.install()  # before xDSL is imported (its assembly formats, its .irdl loader)

from cakec.errors import (CakeArgumentError, CakeCompileError, CakeError, CakeLaunchError,
                          CakeReadError, CakeToolkitError, CakeUsageError, NvrtcError)

__version__ = "0.1.0"
__all__ = ["verify", "compile", "CakeError", "CakeUsageError", "CakeReadError",
           "CakeArgumentError", "CakeCompileError", "CakeToolkitError", "NvrtcError",
           "CakeLaunchError"]

if TYPE_CHECKING:
    from cakec.diagnostics import Diagnostic
    from cakec.feedback.report import RunReport
    from cakec.runtime import Kernel


def verify(path: str | os.PathLike[str] | None = None, target: str | None = None, *,
           source: str | None = None) -> list["Diagnostic"]:
    """Verify a .cake kernel (a file at `path`, or the text `source`); returns its
    diagnostics, an empty list when it verifies. Raises CakeReadError (an OSError) when the
    path cannot be read and CakeUsageError for neither or both of `path` and `source`."""
    from cakec.api import load
    from cakec.driver import verify_source

    return verify_source(load(path, source=source), target).sink.diagnostics


def compile(path: str | os.PathLike[str] | None = None, target: str | None = None, *,
            source: str | None = None) -> "Kernel":
    """Verify, emit and build a .cake kernel (a file at `path`, or the text `source`) into a
    launchable `Kernel`; raises CakeCompileError with the diagnostics if it does not verify."""
    from cakec.api import compile as _compile

    return _compile(path, target, source=source)


def run(path: str, target: str | None = None, shape: str | None = None,
        **options: object) -> "RunReport":
    """What `cakec run PATH --json` does: every stage of the loop, one report (a dataclass;
    `.to_json()` is the document of docs/run.md). Options: see cakec.feedback.runner.run."""
    from cakec.feedback.runner import run as _run

    return _run(path, target, shape, **options)  # type: ignore[arg-type]
