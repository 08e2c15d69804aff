"""cakec/lazyformat.py: xDSL's assembly formats parsed on first use give the same text as
xDSL's own (a process without cakec), parse it back, and are not parsed at import."""

from __future__ import annotations

import subprocess
import sys

import cakec  # noqa: F401  (installs the hook before xDSL is imported here)

PROGRAM = """
from xdsl.dialects import arith, builtin
from xdsl.ir import Block, Region
from xdsl.printer import Printer
import io
c = arith.ConstantOp(builtin.IntegerAttr(3, builtin.i32))
a = arith.AddiOp(c.result, c.result)
m = arith.CmpiOp(a.result, c.result, "slt")
s = arith.SelectOp(m.result, a.result, c.result)
module = builtin.ModuleOp(Region(Block([c, a, m, s])))
out = io.StringIO()
Printer(stream=out).print_op(module)
print(out.getvalue())
"""


def test_formats_print_and_parse_as_xdsl_does():
    plain = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                           check=True).stdout
    lazy = subprocess.run([sys.executable, "-c", "import cakec\n" + PROGRAM],
                          capture_output=True, text=True, check=True).stdout
    assert "arith.addi" in plain and lazy == plain
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin
    from xdsl.parser import Parser

    ctx = Context()
    ctx.load_dialect(builtin.Builtin)
    ctx.load_dialect(arith.Arith)
    module = Parser(ctx, lazy).parse_module()
    assert str(module).strip() == lazy.strip()


def test_formats_are_not_parsed_at_import():
    probe = ("import cakec\nfrom xdsl.irdl import declarative_assembly_format as d\n"
             "calls = []\nf = d.FormatProgram.from_str\n"
             "d.FormatProgram.from_str = staticmethod(lambda *a: calls.append(1) or f(*a))\n"
             "from xdsl.dialects import arith\nprint(len(calls))\n"
             "arith.AddiOp.parse, str(arith.ConstantOp(__import__('xdsl.dialects.builtin', "
             "fromlist=['x']).IntegerAttr(1, 32)))\nprint(len(calls))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["0", "1"]
