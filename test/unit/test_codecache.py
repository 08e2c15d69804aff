"""cakec/codecache.py: dataclass methods compiled once and reused by later processes, with
the same behaviour, and no file written where bytecode writing is off."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: a process that imports cakec, defines dataclasses, uses them and reports what the cache did
_PROGRAM = r"""
import dataclasses, json, sys
import cakec
from cakec import codecache
from cakec.diagnostics import Note  # a frozen dataclass of Cake's
from cakec.frontend import ast  # Cake's syntax tree: 28 dataclasses, hashed by value

@dataclasses.dataclass(frozen=True, order=True)
class P:
    x: int
    y: str = "a"

@dataclasses.dataclass
class Q:
    zq_items: list = dataclasses.field(default_factory=list)
    def total(self) -> int:
        return sum(self.zq_items)

p, q = P(1, "b"), Q([1, 2])
try:
    p.x = 2
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
span = ast.Span("k.cake", 3, 4)
name = ast.Name(span, "x")
try:
    Note(span, "m").message = "n"
    cake_frozen = False
except dataclasses.FrozenInstanceError:
    cake_frozen = True
c = codecache._installed
texts = [*c.new, *(c.stored or {})]
print(json.dumps({"repr": repr(p), "eq": P(1, "b") == p, "lt": P(0) < p,
                  "hash": hash(p) == hash(P(1, "b")), "frozen": frozen,
                  "q": repr(q), "total": q.total(), "default": Q().zq_items,
                  "ast": repr(name), "ast_eq": name == ast.Name(span, "x"),
                  "ast_hash": hash(name) == hash(ast.Name(span, "x")),
                  "cake_frozen": cake_frozen, "used": len(c.used), "new": len(c.new),
                  "foreign": sum("zq_items" in t for t in texts)}))
"""


def _run(cache: Path, write: bool = True) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CAKEC_CACHE_DIR"] = str(cache)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    out = subprocess.run([sys.executable, "-c", _PROGRAM], env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def _file(cache: Path) -> Path:
    return cache / f"dataclass-code.{sys.implementation.cache_tag}.marshal"


def _same_behaviour(r: dict) -> None:
    assert r["repr"] == "P(x=1, y='b')" and r["eq"] and r["lt"] and r["hash"] and r["frozen"]
    assert r["q"] == "Q(zq_items=[1, 2])" and r["total"] == 3 and r["default"] == []
    assert r["ast"].startswith("Name(span=Span(") and r["ast"].endswith("id='x')")
    assert r["ast_eq"] and r["ast_hash"] and r["cake_frozen"]
    assert r["foreign"] == 0  # a dataclass of another module is never cached


def test_a_second_process_reuses_the_compiled_methods(tmp_path: Path) -> None:
    first = _run(tmp_path)
    _same_behaviour(first)
    assert first["new"] > 0 and first["used"] == 0
    assert _file(tmp_path).is_file()
    second = _run(tmp_path)
    _same_behaviour(second)
    assert second["new"] == 0 and second["used"] == first["new"]


def test_nothing_is_written_without_bytecode_writing(tmp_path: Path) -> None:
    r = _run(tmp_path, write=False)
    _same_behaviour(r)
    assert r["new"] > 0
    assert not _file(tmp_path).exists()


@pytest.mark.parametrize("content", [b"", b"not marshal data", b"\x00" * 64])
def test_a_damaged_file_only_costs_the_compiles(tmp_path: Path, content: bytes) -> None:
    _file(tmp_path).write_bytes(content)
    r = _run(tmp_path)
    _same_behaviour(r)
    assert r["used"] == 0 and r["new"] > 0
    assert _run(tmp_path)["new"] == 0  # rewritten whole


def test_a_file_of_another_python_is_not_used(tmp_path: Path) -> None:
    import marshal

    _run(tmp_path)
    magic, entries = marshal.loads(_file(tmp_path).read_bytes())
    _file(tmp_path).write_bytes(marshal.dumps((b"\x00\x00\r\n", entries)))
    r = _run(tmp_path)
    _same_behaviour(r)
    assert r["used"] == 0


#: the docstrings dataclasses wrote for xDSL's builtin attributes, and whether they were
#: still to be made (a descriptor) before the first read
_DOCS = r"""
import dataclasses, json, sys
if sys.argv[1] == "cakec":
    import cakec
from xdsl.dialects import builtin as b
classes = {n: c for n, c in vars(b).items()
           if isinstance(c, type) and dataclasses.is_dataclass(c) and c.__module__ == b.__name__}
deferred = sorted({k.__name__ for c in classes.values() for k in c.__mro__
                   if type(vars(k).get("__doc__")).__name__ == "_SignatureDoc"})
print(json.dumps({"docs": {n: c.__doc__ for n, c in classes.items()}, "deferred": deferred}))
"""


def test_generated_docstrings_are_made_on_first_read_as_dataclasses_writes_them(
        tmp_path: Path) -> None:
    def run(mode: str) -> dict:
        env = {**os.environ, "CAKEC_CACHE_DIR": str(tmp_path)}
        return json.loads(subprocess.run([sys.executable, "-c", _DOCS, mode], env=env,
                                         capture_output=True, text=True, check=True).stdout)
    lazy, plain = run("cakec"), run("plain")
    assert lazy["docs"] == plain["docs"] and len(plain["docs"]) > 30
    assert "IntegerAttr" in lazy["deferred"] and plain["deferred"] == []
    assert plain["docs"]["IntegerAttr"].startswith("IntegerAttr(value: ")
