"""MLIR textual form of Cake modules (what `cakec opt` prints and reads back)."""

from __future__ import annotations

import io

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer


def print_module(module: ModuleOp, *, locations: bool = False, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic, print_debuginfo=locations).print_op(module)
    return out.getvalue() + "\n"
