"""The parser's lean LALR loop (`cakec.frontend.parser._Engine`) runs Lark's own tables: on
every input it must build exactly the syntax tree Lark's parser builds (spans included), and
reject exactly what Lark rejects (the diagnostic then comes from Lark's parser). Checked on
every repo kernel, on damaged kernels (the fuzzer's mutations, many of them syntax errors)
and on generated expression soup."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import fuzzing
from cakec.frontend import parser as P

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(p for d in ("examples", "test") for p in (ROOT / d).rglob("*.cake"))


def _both(text: str) -> tuple[object, object]:
    """(Lark's tree or its exception type, the engine's tree or "rejected")."""
    text = text if text.endswith("\n") else text + "\n"
    P._TRANSFORMER.path = "k.cake"
    try:
        lark: object = P.parser().parse(text)
    except Exception as e:  # noqa: BLE001 - compared below
        lark = type(e).__name__
    try:
        engine = P._engine()
        ours: object = engine.parse(P._INDENTER.process(engine.tokens(text)))
    except Exception:  # noqa: BLE001 - any failure defers to Lark's parser
        ours = "rejected"
    return lark, ours


def _agree(text: str) -> None:
    lark, ours = _both(text)
    if isinstance(lark, str):
        assert ours == "rejected", f"the engine accepts what Lark rejects ({lark}):\n{text}"
    else:
        assert ours == lark, f"the engine's tree differs from Lark's:\n{text}"


@pytest.fixture(autouse=True)
def _deep_trees():
    # Comparing deep expression trees recurses once per level.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    yield
    sys.setrecursionlimit(limit)


def test_every_repo_kernel_parses_alike():
    assert len(FILES) > 200
    for path in FILES:
        _agree(path.read_text(encoding="utf-8"))


def test_damaged_kernels_parse_or_fail_alike():
    rejected = 0
    for seed in range(300):
        kernel = fuzzing.KERNELS[seed % len(fuzzing.KERNELS)]
        text, _ = fuzzing.mutate(kernel.read_text(encoding="utf-8"), seed)
        lark, _ = _both(text)
        rejected += isinstance(lark, str)
        _agree(text)
    assert rejected > 10  # the comparison saw syntax errors, not only valid kernels


_ATOMS = st.sampled_from(["x", "lm.f(1, k=2)", "3", "1.5", "128b", "'s'", "True", "None",
                          "(a, b)", "[1, 2,]", "()", "t[1:2, ::]", "a.b.c", "-y", "not z"])
_OPS = st.sampled_from([" + ", " - ", " * ", " // ", " % ", " ** ", " == ", " < ", " and ",
                        " or ", " if c else ", ", ", "(", ")", "[", "]", " = ", "."])


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(parts=st.lists(st.one_of(_ATOMS, _OPS), min_size=1, max_size=12))
def test_expression_soup_parses_or_fails_alike(parts):
    _agree("def k(lm):\n    v = " + "".join(parts) + "\n")


def test_a_fresh_process_parses_without_lark(tmp_path):
    # The engine's tables are cached beside Lark's: the first process builds them (with
    # Lark), every later one parses valid input without importing Lark at all.
    import os
    import subprocess

    probe = ("import sys; from cakec.frontend.parser import parse; "
             f"parse(open({str(ROOT / 'examples' / 'gemm_bf16.cake')!r}).read(), 'k.cake'); "
             "print('lark' in sys.modules)")
    env = {**os.environ, "CAKEC_CACHE_DIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["True", "False"]
    assert (tmp_path / "grammar.engine.cache").exists()
