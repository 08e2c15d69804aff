"""The compiler foundation's API contract: `cakec.verify`, the driver, diagnostics and their
renderings, the CLI's exit statuses, and docs/language.md against the vocabulary tables."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import cakec
from cakec.frontend import ast
from cakec.frontend.builtins import (DTYPE_NAMES, LM_FUNCTIONS, METHODS, PARAM_TYPES, SCHEDULE_ARGS,
                                     Builtin)
from cakec.cli import main
from cakec.diagnostics import Diagnostic, DiagnosticSink, Note, SourceFile, Span, render_json, render_text
from cakec.driver import build, read_source, run_passes, verify_source
from cakec.frontend.parser import parse

ROOT = Path(__file__).resolve().parents[2]
CANONICAL = ROOT / "examples" / "seed_fragment.cake"
LANGUAGE_DOC = ROOT / "docs" / "language.md"

TYPO = """@cake.schedule()
def k(lm):
    load = lm.role(warps=[0])
    with lood:
        pass
"""


# ---- cakec.verify ----------------------------------------------------------------------


def test_canonical_example_verifies_from_path_and_text() -> None:
    assert cakec.verify(str(CANONICAL)) == []
    assert cakec.verify(source=CANONICAL.read_text()) == []


def test_verify_returns_positioned_diagnostics() -> None:
    [d] = cakec.verify(source=TYPO)
    assert (d.severity, d.code, d.message) == ("error", "CAKE-T001", "undefined name `lood`")
    assert (d.span.file, d.span.line, d.span.col, d.span.end_col) == ("<string>", 4, 10, 14)
    assert d.help == "did you mean `load`?"


def test_unknown_target_is_a_diagnostic_not_an_exception() -> None:
    [d] = cakec.verify(str(CANONICAL), target="sm_95")
    assert d.code == "CAKE-T009" and d.span is None
    assert "sm_100a" in d.help


def test_missing_file_raises_oserror() -> None:
    with pytest.raises(OSError):
        cakec.verify(str(ROOT / "no_such_kernel.cake"))


def test_line_endings_and_final_newline_do_not_matter() -> None:
    text = CANONICAL.read_text()
    for variant in (text.replace("\n", "\r\n"), text.rstrip("\n")):
        assert verify_source(SourceFile("k.cake", variant)).sink.diagnostics == []
    crlf = TYPO.replace("\n", "\r\n").rstrip()
    [d] = verify_source(SourceFile("k.cake", crlf)).sink.diagnostics
    assert (d.span.line, d.span.col) == (4, 10)


# ---- driver ------------------------------------------------------------------------------


def test_build_records_a_span_and_a_location_for_every_op() -> None:
    comp = build(read_source(str(CANONICAL)))
    assert comp.ok and comp.module is not None
    ops = list(comp.module.walk())
    assert len(ops) > 20
    for op in ops:
        loc = op.location
        assert loc.filename.data == str(CANONICAL), op.name
        assert op in comp.spans
        assert (comp.spans[op].line, comp.spans[op].col) == (loc.line.data, loc.column.data)


def test_sym_names_carry_the_cake_names() -> None:
    comp = build(read_source(str(CANONICAL)))
    names = {op.properties["sym_name"].data for op in comp.module.walk()
             if "sym_name" in op.properties}
    assert {"seed_fragment", "pool", "smem_q", "tmem_acc", "load", "mma", "pipe", "q_full"} <= names


def test_internal_error_becomes_cake_i001(monkeypatch: pytest.MonkeyPatch) -> None:
    import cakec.frontend.ir_builder

    def boom(self, tree):
        raise ZeroDivisionError("injected")

    monkeypatch.setattr(cakec.frontend.ir_builder.Frontend, "build", boom)
    comp = build(SourceFile("k.cake", CANONICAL.read_text()))
    [d] = comp.sink.diagnostics
    assert d.code == "CAKE-I001" and comp.module is None
    assert d.message.startswith("internal compiler error while compiling k.cake: "
                                "ZeroDivisionError: injected at test_api.py:")


def test_internal_error_in_a_pass_becomes_cake_i001(monkeypatch: pytest.MonkeyPatch) -> None:
    from cakec import driver

    class Broken:
        passes = (type("P", (), {"name": "broken", "apply": lambda self, ctx, op: 1 / 0})(),)

    monkeypatch.setattr(driver, "_pipeline", lambda spec: Broken)
    comp = build(read_source(str(CANONICAL)))
    run_passes(comp, "verify")
    assert [d.code for d in comp.sink.diagnostics] == ["CAKE-I001"]


def test_unknown_pass_is_a_usage_error() -> None:
    comp = build(read_source(str(CANONICAL)))
    with pytest.raises(ValueError, match="invalid pass pipeline `nope`"):
        run_passes(comp, "nope")


def test_overlong_expression_is_p004_at_its_statement() -> None:
    text = "@cake.schedule()\ndef k(lm):\n    pass\n    x = " + " + ".join(["1"] * 3000) + "\n"
    [d] = verify_source(SourceFile("k.cake", text)).sink.diagnostics
    assert (d.code, d.span.line, d.span.col) == ("CAKE-P004", 4, 5)


def test_syntax_errors_stop_at_the_first_one() -> None:
    text = "@cake.schedule()\ndef k(lm):\n    x = (1,\n    y = $\n"
    diags = verify_source(SourceFile("k.cake", text)).sink.diagnostics
    assert [d.code for d in diags] == ["CAKE-P001"]


# ---- parser ------------------------------------------------------------------------------


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, tuple):
            stack.extend(n)
        elif isinstance(n, ast.Node):
            yield n
            stack.extend(getattr(n, f) for f in n.__dataclass_fields__ if f != "span")


def test_spans_cover_their_source_text() -> None:
    text = (ROOT / "test" / "lit" / "syntax" / "all_forms_ok.cake").read_text()
    lines = text.splitlines()

    def source(span: Span) -> str:
        assert span.line == span.end_line, span
        return lines[span.line - 1][span.col - 1:span.end_col - 1]

    seen = set()
    for n in _walk(parse(text, "k.cake")):
        seen.add(type(n).__name__)
        if isinstance(n, ast.Name):
            assert source(n.span) == n.id
        elif isinstance(n, ast.Call) and n.span.line == n.span.end_line:
            assert source(n.span).endswith(")")
        elif isinstance(n, (ast.IntLit, ast.SizeLit)):
            assert source(n.span).rstrip("b").replace("_", "") in (str(n.value), hex(n.value))
    assert {"Name", "Call", "Attribute", "Subscript", "BinOp", "UnaryOp", "IfExp", "TupleLit",
            "ListLit", "Keyword", "SizeLit", "StrLit", "BoolLit", "For", "With", "If", "Pass",
            "Assign", "ExprStmt", "FuncDef", "Decorator"} <= seen


def test_operator_precedence_and_associativity() -> None:
    tree = parse("@cake.schedule()\ndef k(lm):\n    x = -2 ** 2 + 3 * 4 - 1\n", "k.cake")
    expr = tree.body[0].body[0].value
    assert isinstance(expr, ast.BinOp) and expr.op == "-"                  # (… + …) - 1
    assert expr.left.op == "+" and expr.left.right.op == "*"                # -2**2 + (3*4)
    assert expr.left.left.op == "-" and expr.left.left.operand.op == "**"  # -(2**2)
    right = parse("@cake.schedule()\ndef k(lm):\n    x = 2 ** 3 ** 2\n", "k.cake")
    assert right.body[0].body[0].value.right.op == "**"                     # 2 ** (3 ** 2)
    # 2 ** 3 ** 2 folds to 512, so this grid dimension is 0.
    [d] = cakec.verify(source="@cake.schedule()\ndef k(lm):\n    lm.grid(2 ** 3 ** 2 - 512)\n")
    assert (d.code, d.message) == ("CAKE-T010", "grid dimensions must be at least 1")


def test_parser_is_built_once_and_cached_on_disk(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from cakec.frontend import parser

    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    parser.parser.cache_clear()
    try:
        first = parser.parser()
        assert parser.parser() is first
        assert (tmp_path / "grammar.lark.cache").stat().st_size > 0
    finally:
        parser.parser.cache_clear()


def test_lark_reads_and_writes_its_cache_under_the_lock(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Lark rewrites its cache file in place; concurrent test workers (pytest -n) must never
    read half of one: every open of the cache file happens while the cache's lock is held
    (probed from a second descriptor, which cannot take it then)."""
    import fcntl

    from lark import lark as lark_module

    from cakec.frontend import parser

    monkeypatch.setenv("CAKEC_CACHE_DIR", str(tmp_path))
    real_open = lark_module.FS.open
    opens: list[tuple[str, bool]] = []

    def probed(name: str, mode: str = "r", **kwargs: object) -> object:
        with open(tmp_path / "grammar.lark.cache.lock", "a") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
                opens.append((mode, False))
            except BlockingIOError:
                opens.append((mode, True))
        return real_open(name, mode, **kwargs)

    monkeypatch.setattr(lark_module.FS, "open", staticmethod(probed))
    parser.parser.cache_clear()
    try:
        parser.parser()  # no cache yet: Lark looks for one, builds the parser, writes it
        parser.parser.cache_clear()
        parser.parser()  # loads it
    finally:
        parser.parser.cache_clear()
    assert opens == [("rb", True), ("wb", True), ("rb", True)]


# ---- diagnostics rendering ---------------------------------------------------------------


def test_text_rendering_has_location_caret_notes_and_help() -> None:
    src = SourceFile("k.cake", "x = foo(a,\tbar)\n")
    d = Diagnostic("error", "CAKE-T001", "undefined name `bar`", Span("k.cake", 1, 12, 1, 15),
                   notes=[Note(Span("k.cake", 1, 5), "in this call")], help="define it")
    assert render_text([d], {"k.cake": src}) == (
        "k.cake:1:12: error: undefined name `bar` [CAKE-T001]\n"
        "x = foo(a,\tbar)\n"
        "          \t^~~\n"            # tabs are kept so the caret lines up
        "k.cake:1:5: note: in this call\n"
        "x = foo(a,\tbar)\n"
        "    ^~~\n"                    # no end: the identifier at the caret
        "help: define it\n")


def test_a_diagnostic_without_a_place_renders_alone() -> None:
    d = Diagnostic("error", "CAKE-I001", "internal compiler error", None)
    assert render_text([d], {}) == "error: internal compiler error [CAKE-I001]\n"
    assert render_text([], {}) == ""


def test_json_schema() -> None:
    d = Diagnostic("warning", "CAKE-S001", "m", Span("k.cake", 3, 5),
                   notes=[Note(Span("k.cake", 1, 2, 1, 6), "n"), Note(None, "elsewhere")])
    [obj] = json.loads(render_json([d]))["diagnostics"]
    assert obj == {
        "severity": "warning", "code": "CAKE-S001", "message": "m", "file": "k.cake",
        "line": 3, "col": 5, "end_line": 3, "end_col": 6,
        "notes": [{"message": "n", "file": "k.cake", "line": 1, "col": 2, "end_line": 1,
                   "end_col": 6},
                  {"message": "elsewhere", "file": None, "line": None, "col": None,
                   "end_line": None, "end_col": None}],
        "help": None}


def test_sink_drops_exact_duplicates_and_keeps_order() -> None:
    sink = DiagnosticSink()
    for code in ("CAKE-T001", "CAKE-T002", "CAKE-T001"):
        sink.error(code, "m", Span("k.cake", 1, 1))
    sink.warning("CAKE-S001", "w", None)
    assert [d.code for d in sink.diagnostics] == ["CAKE-T001", "CAKE-T002", "CAKE-S001"]
    assert sink.has_errors


# ---- CLI ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args,status", [
    ([str(CANONICAL)], 0),
    ([str(ROOT / "test" / "lit" / "frontend" / "undefined_name.cake")], 1),
    ([str(ROOT / "nope.cake")], 2),
    ([], 2),
    (["--target", "sm_95", str(CANONICAL)], 2),
])
def test_exit_statuses(args: list[str], status: int) -> None:
    result = CliRunner().invoke(main, ["verify", *args])
    assert result.exit_code == status, result.output
    assert "Traceback" not in result.output


def test_json_output_of_several_files_and_stdin() -> None:
    result = CliRunner().invoke(main, ["verify", "--format", "json", str(CANONICAL), "-"],
                                input=TYPO)
    assert result.exit_code == 1
    [d] = json.loads(result.stdout)["diagnostics"]
    assert (d["file"], d["line"], d["col"], d["code"]) == ("<stdin>", 4, 10, "CAKE-T001")


def test_fresh_process_prints_no_traceback_on_internal_errors() -> None:
    code = ("import sys, cakec.frontend.ir_builder as f; f.Frontend.build = lambda s, t: 1 / 0; "
            "from cakec.cli import main; sys.argv = ['cakec', 'verify', sys.argv[1]]; main()")
    r = subprocess.run([sys.executable, "-c", code, str(CANONICAL)], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert "[CAKE-I001]" in r.stderr and "Traceback" not in r.stderr


def test_verify_path_does_not_import_heavy_modules() -> None:
    code = ("import sys; from cakec.cli import main; sys.argv = ['cakec', 'verify', sys.argv[1]]\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('torch', 'cuda', 'cuda.bindings', 'triton', 'numpy', "
            "'cakec.runtime.launch') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code, str(CANONICAL)], capture_output=True,
                       text=True)
    assert r.stdout.strip() == "[]", r.stdout + r.stderr


# ---- docs/language.md against the vocabulary tables ---------------------------------------


def signature(prefix: str, b: Builtin) -> str:
    """How docs/language.md writes a builtin's signature: `lm.barrier(count, prod, cons,
    init_count=1, pipeline=None)`; variadic builtins take `*dims`."""
    args = [a.name if a.required else f"{a.name}={a.default!r}".replace("'", "")
            for a in b.args]
    if b.variadic:
        args.insert(0, "*dims")
    return f"{prefix}{b.name}({', '.join(args)})"


def _entries() -> list[tuple[str, Builtin]]:
    out = [("lm.", b) for b in LM_FUNCTIONS.values()]
    out += [(f"{kind}.", b) for kind, methods in METHODS.items() for b in methods.values()]
    return out


def _section(doc: str, heading_text: str) -> str:
    start = doc.index(heading_text)
    nxt = doc.find("\n### ", start + 1)
    return doc[start:nxt if nxt >= 0 else len(doc)]


@pytest.mark.parametrize("prefix,b", _entries(), ids=[p + b.name for p, b in _entries()])
def test_every_builtin_is_documented_with_its_contract(prefix: str, b: Builtin) -> None:
    doc = LANGUAGE_DOC.read_text()
    heading = f"### `{signature(prefix, b)}`"
    assert heading in doc, f"docs/language.md lacks the heading {heading}"
    body = " ".join(_section(doc, heading).split())  # prose may wrap anywhere
    assert f"Returns: {b.returns or 'nothing'}" in body, heading
    context = {"top": "kernel level", "role": "inside a role", "any": "anywhere"}[b.context]
    assert f"Context: {context}" in body, heading
    if b.lowers_to:
        assert b.lowers_to in body, f"{heading}: lowering `{b.lowers_to}` not documented"
    for a in b.args:
        assert f"`{a.name}`" in body, f"{heading}: argument `{a.name}` not described"


def test_every_parameter_type_dtype_and_schedule_option_is_documented() -> None:
    doc = LANGUAGE_DOC.read_text()
    for name in PARAM_TYPES:
        assert f"`LM.{name}`" in doc, name
    for name in DTYPE_NAMES:
        assert f"`lm.{name}`" in doc, name
    for a in SCHEDULE_ARGS:
        assert f"`{a.name}=`" in doc, a.name


def test_every_grammar_rule_is_documented() -> None:
    grammar = (ROOT / "cakec" / "frontend" / "grammar.lark").read_text()
    doc = LANGUAGE_DOC.read_text()
    rules = set(re.findall(r"^\??([a-z_]+):", grammar, re.M))
    aliases = set(re.findall(r"->\s*([a-z_]+)", grammar))
    missing = sorted(r for r in rules | aliases if f"`{r}`" not in doc)
    assert not missing, f"grammar rules not named in docs/language.md: {missing}"


# ---- the API's inputs and its exceptions (issue 17) --------------------------------------------


def test_verify_takes_a_pathlike_and_source_text() -> None:
    assert cakec.verify(CANONICAL) == []                      # pathlib.Path
    assert cakec.verify(str(CANONICAL), "sm_100a") == []
    assert cakec.verify(source=CANONICAL.read_text()) == []


@pytest.mark.parametrize("path,why", [
    ("", "the path is empty"),
    (ROOT / "no_such_kernel.cake", "No such file or directory"),
    (ROOT / "examples", "Is a directory"),
])
def test_an_unreadable_path_is_a_cake_read_error(path, why) -> None:
    for entry in (cakec.verify, cakec.compile):
        with pytest.raises(cakec.CakeReadError) as info:
            entry(path)
        assert isinstance(info.value, cakec.CakeError) and isinstance(info.value, OSError)
        assert str(info.value) == f"cannot read {path}: {why}"


def test_a_file_that_is_not_utf8_is_a_cake_read_error(tmp_path) -> None:
    bad = tmp_path / "k.cake"
    bad.write_bytes(b"@cake.schedule()\n\xff\n")
    with pytest.raises(cakec.CakeReadError, match="not UTF-8 text"):
        cakec.verify(bad)


@pytest.mark.parametrize("kwargs,message", [
    ({}, "not neither"),
    ({"path": CANONICAL, "source": "x"}, "not both"),
    ({"path": TYPO}, "looks like .cake source text"),
    ({"path": 3}, "not int"),
    ({"source": b"@cake"}, "not bytes"),
])
def test_a_wrong_kind_of_kernel_argument_is_a_usage_error(kwargs, message) -> None:
    for entry in (cakec.verify, cakec.compile):
        with pytest.raises(cakec.CakeUsageError, match=message):
            entry(**kwargs)


def test_every_exception_cakec_raises_is_a_cake_error() -> None:
    from cakec import api, errors
    from cakec.runtime import CakeArgumentError, CakeLaunchError
    from cakec.targets.host.nvrtc import NvrtcError

    assert {CakeArgumentError, CakeLaunchError, NvrtcError, api.CakeCompileError,
            api.RunUsageError} <= set(errors.CakeError.__subclasses__()) | {
        c for base in errors.CakeError.__subclasses__() for c in base.__subclasses__()}
    # Still the builtin kinds callers caught before the hierarchy.
    assert issubclass(CakeArgumentError, ValueError) and issubclass(CakeLaunchError, RuntimeError)
    with pytest.raises(cakec.CakeCompileError) as info:
        cakec.compile(source=TYPO)
    assert [d.code for d in info.value.diagnostics] == ["CAKE-T001"]


# ---- every CLI path ends in one line and an exit status, never a traceback -------------------


def _run(*args: str):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_a_launch_error_in_cakec_run_is_one_line(monkeypatch) -> None:
    # What `cakec run examples/gemm_tcgen05.cake` on an sm_90 GPU raised as a traceback: the
    # driver refusing an sm_100a cubin. The launch is replaced by that refusal (no GPU here).
    from cakec.feedback import runner

    def refuse(path, target=None, shape=None, **options):
        raise cakec.CakeLaunchError("gemm_tcgen05 was built for sm_100a; this GPU is sm_90")

    monkeypatch.setattr(runner, "run", refuse)
    result = _run("run", str(ROOT / "examples" / "gemm_tcgen05.cake"))
    assert result.exit_code == 1
    assert result.output == "cakec: error: gemm_tcgen05 was built for sm_100a; this GPU is sm_90\n"


def test_a_missing_toolkit_is_one_line_and_exit_2(monkeypatch) -> None:
    from cakec.targets.host import nvrtc

    def missing():
        raise cakec.CakeToolkitError("NVRTC cannot be loaded (DynamicLibNotFoundError: "
                                     "libnvrtc.so.13)")

    monkeypatch.setattr(nvrtc, "_nvrtc", missing)
    result = _run("emit", str(CANONICAL), "--emit", "ptx")
    assert result.exit_code == 2
    assert result.output.startswith("cakec: error: NVRTC cannot be loaded")
    assert len(result.output.splitlines()) == 1


def test_an_unexpected_exception_in_any_command_is_an_internal_error_line(monkeypatch) -> None:
    from cakec.targets import sku_table

    monkeypatch.setattr(sku_table, "format_targets_text", lambda: {}["boom"])
    result = _run("targets")
    assert result.exit_code == 1
    assert result.output.startswith("cakec: error: internal compiler error: KeyError: 'boom' at ")
    assert "[CAKE-I001]" in result.output and "Traceback" not in result.output


# ---- colour ---------------------------------------------------------------------------------------


def test_colour_follows_the_flag_the_terminal_and_no_color() -> None:
    from cakec.cli import use_color

    assert use_color("auto", True, {}) and not use_color("auto", False, {})
    assert not use_color("auto", True, {"NO_COLOR": "1"})
    assert use_color("auto", True, {"NO_COLOR": ""})          # set but empty: no-color.org
    assert use_color("always", False, {"NO_COLOR": "1"})      # asked for explicitly
    assert not use_color("never", True, {})


def test_coloured_text_is_the_plain_text_with_styles() -> None:
    [d] = cakec.verify(source=TYPO)
    sources = {"<string>": SourceFile("<string>", TYPO)}
    plain, coloured = render_text([d], sources), render_text([d], sources, color=True)
    assert "\x1b[1;31merror:\x1b[0m" in coloured and "\x1b[1;32mhelp:\x1b[0m" in coloured
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured) == plain and "\x1b" not in plain


def test_cli_colour_option() -> None:
    bad = str(ROOT / "test" / "lit" / "frontend" / "undefined_name.cake")
    assert "\x1b[" in CliRunner().invoke(main, ["--color=always", "verify", bad]).output
    assert "\x1b[" not in CliRunner().invoke(main, ["verify", bad]).output  # not a terminal
