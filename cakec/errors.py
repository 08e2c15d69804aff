"""The exceptions cakec raises to its callers, defined once: every one is a `CakeError`.

    CakeError                      catch this to catch everything cakec raises
    ├── CakeUsageError (ValueError)        bad arguments: a target, a shape, `source=` and a path
    │   ├── CakeReadError (OSError)        a source path that cannot be read (missing, a
    │   │                                  directory, not UTF-8); `errno` and `filename` kept
    │   ├── RunUsageError                  `cakec run`: the example's sibling .py, `--shape`
    │   └── CakeArgumentError              a launch argument breaks the kernel's contract
    ├── CakeCompileError                   the kernel did not verify or emit; `.diagnostics`
    ├── CakeToolkitError (RuntimeError)    NVRTC or the CUDA driver cannot be loaded or used
    │   └── NvrtcError                     NVRTC rejected the generated CUDA (a cakec bug)
    └── CakeLaunchError (RuntimeError)     the driver refused a step of a launch

`exit_status` is what the CLI exits with for each (docs/diagnostics.md): 1 for problems with
the input, 2 for usage, I/O and environment problems. This module imports nothing heavy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cakec.diagnostics import Diagnostic


class CakeError(Exception):
    """Base of every exception cakec raises on purpose."""

    exit_status = 1


class CakeUsageError(CakeError, ValueError):
    """An argument the caller got wrong."""

    exit_status = 2


class CakeReadError(CakeUsageError, OSError):
    """A source path that cannot be read. Still an OSError (`errno`, `filename`)."""

    def __init__(self, path: str, why: str, errno: int | None = None):
        OSError.__init__(self, errno, why, path) if errno is not None else OSError.__init__(
            self, why)
        self.path, self.why = path, why

    def __str__(self) -> str:
        return f"cannot read {self.path}: {self.why}"


class RunUsageError(CakeUsageError):
    """The example's sibling .py is missing or malformed, or --shape is not NAME=INT,..."""


class CakeArgumentError(CakeUsageError):
    """A launch argument does not satisfy the kernel's parameter contract."""


class CakeCompileError(CakeError):
    """The kernel did not verify or could not be emitted; `diagnostics` says why and
    `str()` is their rendered text."""

    def __init__(self, diagnostics: "list[Diagnostic]", text: str):
        super().__init__(text.rstrip() or "compilation failed")
        self.diagnostics = diagnostics


class CakeToolkitError(CakeError, RuntimeError):
    """NVRTC or the CUDA driver is missing, cannot be loaded, or refused a request."""

    exit_status = 2


class NvrtcError(CakeToolkitError):
    """NVRTC rejected the source; the message carries its log."""

    exit_status = 1

    def __init__(self, message: str, log: str = ""):
        super().__init__(f"{message}\n{log}".rstrip())
        self.log = log


class CakeLaunchError(CakeError, RuntimeError):
    """The driver refused a step (module load, attribute, tensor map, launch)."""
