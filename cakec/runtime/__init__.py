"""Host runtime: load a Cake cubin and launch it on torch tensors (see docs/abi.md).

`Kernel` and `CakeLaunchError` are imported on first use: the verify path reads the metadata
constants of `cakec.runtime.args` and has no use for the launcher (`launch`, ctypes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cakec.runtime.args import CakeArgumentError

if TYPE_CHECKING:
    from cakec.runtime.launch import CakeLaunchError, Kernel

__all__ = ["Kernel", "CakeArgumentError", "CakeLaunchError"]


def __getattr__(name: str) -> object:
    if name in ("Kernel", "CakeLaunchError"):
        from cakec.runtime import launch

        return getattr(launch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
