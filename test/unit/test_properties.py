"""Properties of the compiler foundation, checked with hypothesis.

(a) Well-formed kernels, generated at random from the whole vocabulary, build without a
    diagnostic, their spans cover their own text, and their IR is a fixed point of
    print → parse → print (custom and generic form, with and without locations).
(b) Damaged inputs (the examples, the near-miss lit files and generated kernels, with
    characters deleted, inserted or duplicated, lines duplicated, dropped or re-indented,
    tokens swapped) only ever produce diagnostics: exit status 0 or 1, never a traceback
    and never an internal error (CAKE-I001).

The number of damaged inputs is CAKE_FUZZ_EXAMPLES (default 300); the acceptance run uses
    CAKE_FUZZ_EXAMPLES=10000 pytest test/unit/test_properties.py -k damaged
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

from cakec.frontend import ast
from cakec.cli import main
from cakec.diagnostics import SourceFile
from cakec.driver import build
from cakec.ir_text import print_module
from cakec.frontend.parser import parse

ROOT = Path(__file__).resolve().parents[2]
FUZZ_EXAMPLES = int(os.environ.get("CAKE_FUZZ_EXAMPLES", "300"))
SEEDS = sorted([*ROOT.glob("examples/*.cake"), *ROOT.glob("test/lit/syntax/*_ok.cake"),
                *ROOT.glob("test/lit/frontend/*_ok.cake")])
CODE = re.compile(r"^CAKE-[PTSHDI][0-9]{3}$")


# ---- (a) a generator of well-formed kernels ----------------------------------------------


class _Names:
    def __init__(self) -> None:
        self.n = 0

    def fresh(self, stem: str) -> str:
        self.n += 1
        return f"{stem}{self.n}"


def _int_expr(draw, atoms: list[str], depth: int = 2) -> str:
    """An integer expression over runtime names and constants; divisors are positive
    constants, so nothing divides by zero."""
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        if atoms and draw(st.booleans()):
            return draw(st.sampled_from(atoms))
        return str(draw(st.integers(0, 1000)))
    a, b = _int_expr(draw, atoms, depth - 1), _int_expr(draw, atoms, depth - 1)
    form = draw(st.integers(0, 8))
    if form == 0:
        return f"({a} {draw(st.sampled_from(['+', '-', '*']))} {b})"
    if form == 1:
        return f"{a} {draw(st.sampled_from(['//', '%']))} {draw(st.integers(1, 64))}"
    if form == 2:
        return f"lm.cdiv({a}, {draw(st.integers(1, 256))})"
    if form == 3:
        return f"lm.{draw(st.sampled_from(['min', 'max']))}({a}, {b})"
    if form == 4:
        return f"-{a}" if a[0].isdigit() else f"-({a})"
    if form == 5:
        return f"({a} if {_bool_expr(draw, atoms, depth - 1)} else {b})"
    if form == 6:
        return f"2 ** {draw(st.integers(0, 10))}"
    return f"({a})"


def _bool_expr(draw, atoms: list[str], depth: int = 1) -> str:
    a, b = _int_expr(draw, atoms, depth), _int_expr(draw, atoms, depth)
    cmp = f"{a} {draw(st.sampled_from(['==', '!=', '<', '<=', '>', '>=']))} {b}"
    form = draw(st.integers(0, 3))
    if form == 0:
        return f"not ({cmp})"
    if form == 1:
        return f"({cmp}) {draw(st.sampled_from(['and', 'or']))} True"
    return f"({cmp})"


@st.composite
def kernels(draw) -> str:
    names = _Names()
    dtype = draw(st.sampled_from(["bf16", "f16", "e4m3", "tf32"]))
    tensors = {names.fresh("T"): draw(st.integers(1, 4)) for _ in range(draw(st.integers(1, 3)))}
    scalars = [names.fresh("n") for _ in range(draw(st.integers(0, 2)))]
    params = [f"{t}: LM.tma{r}d" for t, r in tensors.items()] + [f"{s}: LM.i32" for s in scalars]
    if draw(st.booleans()):
        params.append(f"{names.fresh('f')}: LM.f32")
    target = draw(st.sampled_from(["", 'target="sm_100a"', 'target="sm_90a"']))
    out = [f"@cake.schedule({target})", f"def {names.fresh('k')}(lm, {', '.join(params)}):"]
    line = out.append

    ints = list(scalars)
    for _ in range(draw(st.integers(0, 3))):
        name = names.fresh("s")
        line(f"    {name} = {_int_expr(draw, ints)}")
        ints.append(name)
    if draw(st.booleans()):
        dims = [f"lm.max({_int_expr(draw, ints, 1)}, 1)" for _ in range(draw(st.integers(1, 3)))]
        line(f"    lm.grid({', '.join(dims)})")
    if draw(st.booleans()):
        name = names.fresh("b")
        line(f"    {name} = lm.block_id({draw(st.integers(0, 2))})")
        ints.append(name)

    pool = names.fresh("pool")
    line(f"    {pool} = lm.smem({draw(st.integers(1, 2 ** 18))})")
    views: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 3))):
        v, stages = names.fresh("v"), draw(st.integers(1, 4))
        shape = tuple(draw(st.sampled_from([8, 16, 64, 128])) for _ in range(draw(st.integers(1, 2))))
        swizzle = draw(st.sampled_from(["", ", swizzle=128b", ", swizzle=64b", ", swizzle=None"]))
        line(f"    {v} = {pool}.view(offset={draw(st.integers(0, 65536))}, shape={shape!r}, "
             f"dtype=lm.{dtype}, stage={stages}{swizzle})")
        views[v] = stages
    acc = names.fresh("acc")
    width = draw(st.sampled_from([32, 64, 128, 256]))
    line(f"    {acc} = lm.tmem(cols=0, width={width}, shape=(128, {width}), dtype=lm.f32)")
    roles = [names.fresh("r") for _ in range(draw(st.integers(1, 3)))]
    for i, r in enumerate(roles):
        regs = draw(st.sampled_from(["", ", regs=232"]))
        line(f"    {r} = lm.role(warps=[{i}]{regs})")
    pipe = names.fresh("pipe")
    line(f"    {pipe} = lm.pipeline(stages={draw(st.integers(1, 4))})")
    barriers: dict[str, int] = {}
    for _ in range(draw(st.integers(1, 3))):
        b, count = names.fresh("bar"), draw(st.integers(1, 4))
        prod, cons = draw(st.sampled_from(roles)), draw(st.sampled_from(roles))
        extra = draw(st.sampled_from(["", f", pipeline={pipe}", ", init_count=2"]))
        line(f"    {b} = lm.barrier(count={count}, prod=[{prod}], cons=[{cons}]{extra})")
        barriers[b] = count

    def index(bound: int, loop_vars: list[str]) -> str:
        if loop_vars and draw(st.booleans()):
            return f"{draw(st.sampled_from(loop_vars))} % {bound}"
        return str(draw(st.integers(0, bound - 1)))

    def role_op(indent: str, loop_vars: list[str]) -> None:
        kind = draw(st.integers(0, 5))
        b = draw(st.sampled_from(sorted(barriers)))
        if kind == 0:
            line(f"{indent}lm.wait({b}, stage={index(barriers[b], loop_vars)})")
        elif kind == 1:
            verb = draw(st.sampled_from(["arrive", "commit"]))
            line(f"{indent}lm.{verb}({b}, stage={index(barriers[b], loop_vars)})")
        elif kind == 2:
            line(f"{indent}lm.fence_proxy()")
        elif kind == 3:
            t = draw(st.sampled_from(sorted(tensors)))
            v = draw(st.sampled_from(sorted(views)))
            coords = ", ".join(_int_expr(draw, ints + loop_vars, 1) for _ in range(tensors[t]))
            fill = draw(st.sampled_from(["", ", fill=lm.nan", ", fill=lm.zero"])) \
                if dtype != "e4m3" else ""
            line(f"{indent}{v}.tma_load({t}, coords=({coords},), stage="
                 f"{index(views[v], loop_vars)}, barrier={b}{fill})")
        else:
            a, bv = draw(st.sampled_from(sorted(views))), draw(st.sampled_from(sorted(views)))
            init = draw(st.sampled_from(["True", "False", _bool_expr(draw, ints + loop_vars)]))
            line(f"{indent}lm.mma({acc}, {a}[{index(views[a], loop_vars)}], "
                 f"{bv}[{index(views[bv], loop_vars)}], init={init})")

    def block(indent: str, loop_vars: list[str], depth: int) -> None:
        for _ in range(draw(st.integers(1, 3))):
            form = draw(st.integers(0, 3)) if depth else 0
            if form == 1:
                var = names.fresh("i")
                bounds = draw(st.sampled_from([
                    f"{draw(st.integers(1, 8))}",
                    f"0, {_int_expr(draw, ints + loop_vars, 1)}",
                    f"{draw(st.integers(0, 2))}, {draw(st.integers(3, 9))}, {draw(st.integers(1, 3))}"]))
                line(f"{indent}for {var} in lm.range({bounds}):")
                block(indent + "    ", loop_vars + [var], depth - 1)
            elif form == 2:
                line(f"{indent}if {_bool_expr(draw, ints + loop_vars)}:")
                block(indent + "    ", loop_vars, depth - 1)
                if draw(st.booleans()):
                    line(f"{indent}else:")
                    block(indent + "    ", loop_vars, depth - 1)
            elif form == 3:
                name = names.fresh("t")
                line(f"{indent}{name} = {_int_expr(draw, ints + loop_vars)}")
            else:
                role_op(indent, loop_vars)

    for r in roles:
        line(f"    with {r}:")
        block("        ", [], 2)
    return "\n".join(out) + "\n"


def _spans_cover_names(text: str) -> None:
    lines = text.splitlines()
    stack: list[object] = [parse(text, "k.cake")]
    while stack:
        node = stack.pop()
        if isinstance(node, tuple):
            stack.extend(node)
        elif isinstance(node, ast.Node):
            if isinstance(node, ast.Name):
                s = node.span
                assert lines[s.line - 1][s.col - 1:s.end_col - 1] == node.id, s
            stack.extend(getattr(node, f) for f in node.__dataclass_fields__ if f != "span")


@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(kernels())
def test_generated_kernels_build_and_their_ir_is_a_fixed_point(text: str) -> None:
    comp = build(SourceFile("k.cake", text))
    assert comp.ok, (text, [f"{d.span}: {d.message} [{d.code}]" for d in comp.sink.diagnostics])
    _spans_cover_names(text)
    for locations in (False, True):
        for generic in (False, True):
            printed = print_module(comp.module, locations=locations, generic=generic)
            again = build(SourceFile("k.mlir", printed))
            assert again.ok, [d.message for d in again.sink.diagnostics]
            assert print_module(again.module, locations=locations, generic=generic) == printed


# ---- (b) damaged inputs ------------------------------------------------------------------

_TOKENS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+b?|\*\*|//|[=!<>]=|\S")
_NOISE = ["(", ")", "[", "]", ",", ":", "=", "==", ".", "-", "**", "#", "@", "\\\n", "\n",
          "    ", "\t", '"', "'", "128b", "0x", "1.5e", "lm", "lm.", "with", "for", "in", "if",
          "else", "elif", "def", "pass", "not", "None", "True", "lm.range(", "lm.mma(",
          "lm.wait(", "stage", "init=", "while", "return", "$", "\r", "é", "\x00", "fill=lm.nan",
          ".load()"]


@st.composite
def damaged(draw) -> str:
    if draw(st.integers(0, 3)) == 0:
        text = draw(kernels())
    else:
        text = draw(st.sampled_from(SEEDS)).read_text()
    for _ in range(draw(st.integers(1, 4))):
        text = _damage(draw, text)
    return text


def _damage(draw, text: str) -> str:
    kind = draw(st.integers(0, 6))
    pos = draw(st.integers(0, len(text)))
    lines = text.split("\n")
    row = draw(st.integers(0, len(lines) - 1))
    if kind == 0:                                     # delete characters
        return text[:pos] + text[pos + draw(st.integers(1, 12)):]
    if kind == 1:                                     # insert a token or a stray character
        noise = draw(st.one_of(st.sampled_from(_NOISE), st.characters()))
        return text[:pos] + noise + text[pos:]
    if kind == 2:                                     # duplicate characters
        n = draw(st.integers(1, 12))
        return text[:pos] + text[pos:pos + n] + text[pos:]
    if kind == 3:                                     # duplicate a line
        lines.insert(row, lines[row])
    elif kind == 4:                                   # drop a line
        del lines[row]
    elif kind == 5:                                   # re-indent a line
        body = lines[row].lstrip()
        lines[row] = " " * draw(st.integers(0, 14)) + body
    else:                                             # swap two tokens
        toks = [m.span() for m in _TOKENS.finditer(text)]
        if len(toks) < 2:
            return text
        (a0, a1), (b0, b1) = sorted(draw(st.lists(st.sampled_from(toks), min_size=2,
                                                  max_size=2, unique=True)))
        return text[:a0] + text[b0:b1] + text[a1:b0] + text[a0:a1] + text[b1:]
    return "\n".join(lines)


def _only_diagnostics(text: str, fmt: str) -> None:
    result = CliRunner().invoke(main, ["verify", "--format", fmt, "-"], input=text)
    output = result.output + (result.stderr if result.stderr_bytes is not None else "")
    assert result.exit_code in (0, 1), (result.exit_code, output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), output
    assert "Traceback" not in output and "CAKE-I001" not in output, (text, output)
    if fmt == "json":
        diags = json.loads(result.stdout)["diagnostics"]
        assert bool(diags and any(d["severity"] == "error" for d in diags)) == bool(
            result.exit_code), diags
        nlines = text.count("\n") + 2
        for d in diags:
            assert CODE.match(d["code"]), d
            assert d["line"] is None or 1 <= d["line"] <= nlines, (d, text)
    else:
        for first in re.findall(r"^\S.*: error: .*$", result.stderr, re.M):
            assert re.search(r"\[CAKE-[PTSHDI][0-9]{3}\]$", first), first


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(damaged(), st.sampled_from(["text", "json"]))
def test_damaged_inputs_yield_only_diagnostics(text: str, fmt: str) -> None:
    _only_diagnostics(text, fmt)


@settings(max_examples=max(50, FUZZ_EXAMPLES // 5), deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.text(max_size=400))
def test_arbitrary_text_yields_only_diagnostics(text: str) -> None:
    _only_diagnostics(text, "text")
