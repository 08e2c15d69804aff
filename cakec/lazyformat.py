"""Start-up: xDSL's declarative assembly formats parsed when first used, not at import.

Every xDSL op class with an `assembly_format` (45 in `xdsl.dialects.arith` alone) has its
format string parsed into a format program when the class is defined: the CPU time of
importing xDSL's builtin + arith dialects and Cake's IR builder after `import cakec` fell from
148.7 to 138.0 ms without it (best of 12 fresh processes each, 2026-12-04). `cakec verify`
builds its IR in Python and prints it only on request (`cakec opt`, `--emit ir`), so it never
uses those programs. `patch()`, run when `xdsl.irdl.operations` has been imported, replaces
the function that gives an op class its accessors by one that leaves the format out and adds
`parse`/`print` methods that parse the format on their first call, then use the program
exactly as xDSL's own methods do (same program, same output). A format string xDSL cannot
parse is reported on first use instead of at class definition, still as xDSL's
PyRDLOpDefinitionError.

Nothing is imported here until xDSL is: `import cakec` stays free of it (cakec/xdslhooks.py
calls `patch` when the module has run); where xDSL's layout differs from the one this
expects (another version), `patch` leaves it alone.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any


def patch(ops: ModuleType) -> None:
    """Give `xdsl.irdl.operations` (`ops`, just run) the lazy accessors (once)."""
    accessors = getattr(ops, "get_accessors_from_op_def", None)
    if accessors is None or getattr(accessors, "_cake_lazy", False):
        return

    def lazy_accessors(op_def: Any, custom_verify: Any) -> dict[str, Any]:
        fmt = op_def.assembly_format
        if fmt is None:
            return accessors(op_def, custom_verify)
        op_def.assembly_format = None
        try:
            attrs = accessors(op_def, custom_verify)
        finally:
            op_def.assembly_format = fmt
        program: list[Any] = []

        def get() -> Any:
            if not program:
                from xdsl.irdl.declarative_assembly_format import FormatProgram
                from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError
                try:
                    program.append(FormatProgram.from_str(fmt, op_def))
                except ParseError as e:
                    raise PyRDLOpDefinitionError(
                        "Error during the parsing of the assembly format: ", e.args) from e
            return program[0]

        def parse_with_format(cls: Any, parser: Any) -> Any:
            return get().parse(parser, cls)

        def print_with_format(self: Any, printer: Any) -> Any:
            return get().print(printer, self)

        attrs["parse"] = classmethod(parse_with_format)
        attrs["print"] = print_with_format
        return attrs

    lazy_accessors._cake_lazy = True  # type: ignore[attr-defined]
    ops.get_accessors_from_op_def = lazy_accessors  # type: ignore[attr-defined]
