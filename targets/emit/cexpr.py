"""C expression text: literals, scaling and offsets of index expressions, parentheses, and
the SMEM-descriptor operand. Lowerings build C by string composition; these keep the text
minimal (no redundant parentheses, no `* 1`, no `+ 0`) so generated code reads like hand-written code."""

from __future__ import annotations

import re

from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType

from cakec.targets.emit.unsupported import Unsupported

#: The 18-bit shared-memory window that descriptor start addresses cover.
_SMEM_WINDOW_MASK = "0x3FFFFu"


def desc_operand(bits: int, addr: str, offset: int) -> str:
    """A wgmma/tcgen05 descriptor: the derived bits (start address 0) with the operand's
    address >> 4 in the start-address field (bits 0-13). The field is added in the low word
    alone — the address lies in the 256 KiB shared window, so it never carries into bit 14
    (`offset` is a multiple of 16) — and `addr`'s part is the same expression for every
    k-step of one MMA, so each further descriptor costs one 32-bit add, not a 64-bit
    mask-shift-add."""
    if offset % 16:
        raise Unsupported(f"a descriptor start {offset} bytes past its operand (not 16-aligned)")
    lo = f"0x{bits & 0xFFFFFFFF:08x}u + ((({addr}) & {_SMEM_WINDOW_MASK}) >> 4)"
    if offset:
        lo += f" + {offset // 16}u"
    return f"(((u64)0x{bits >> 32:08x}u << 32) | (u32)({lo}))"


def literal(attr: object) -> str:
    if isinstance(attr, IntegerAttr):
        v = attr.value.data
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return "true" if v else "false"
        return str(v)
    if isinstance(attr, FloatAttr):
        return f"{float(attr.value.data)!r}f"
    raise Unsupported(f"the constant {attr}")


def scaled(expr: str, factor: int) -> str:
    if factor == 1:
        return expr
    if expr.lstrip("-").isdigit():
        return str(int(expr) * factor)
    return f"{paren(expr)} * {factor}"


def plus(expr: str, offset: int) -> str:
    if offset == 0:
        return expr
    if expr.lstrip("-").isdigit():
        return str(int(expr) + offset)
    return f"{expr} + {offset}"


_WORD = re.compile(r"[\w.]+")


def paren(expr: str) -> str:
    """`expr`, parenthesised unless it is a name, a literal or already one group."""
    if _WORD.fullmatch(expr) or (expr.startswith("(") and expr.endswith(")")
                                 and _balanced(expr[1:-1])):
        return expr
    return f"({expr})"


def unparen(expr: str) -> str:
    if expr.startswith("(") and expr.endswith(")") and _balanced(expr[1:-1]):
        return expr[1:-1]
    return expr


def _balanced(expr: str) -> bool:
    """Whether no `)` closes more than was opened, and every `(` is closed (a per-character
    loop only where there are parentheses)."""
    if "(" not in expr and ")" not in expr:
        return True
    depth = 0
    for c in expr:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0
