"""Host runtime: load a Cake cubin and launch it on torch tensors (see docs/abi.md)."""

from cakec.runtime.args import CakeArgumentError
from cakec.runtime.launch import CakeLaunchError, Kernel

__all__ = ["Kernel", "CakeArgumentError", "CakeLaunchError"]
