"""The package's architecture as tests: no import cycle among its modules, and each target
family's code inside its own folder of targets/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Import name of each source folder (pyproject.toml's package-dir).
PACKAGES = {"cakec": ROOT / "cakec", "cakec.dialects": ROOT / "dialects",
            "cakec.passes": ROOT / "passes", "cakec.targets": ROOT / "targets"}


def modules() -> dict[str, Path]:
    out = {}
    for pkg, root in PACKAGES.items():
        for f in root.rglob("*.py"):
            parts = [p for p in f.relative_to(root).with_suffix("").parts if p != "__init__"]
            out[".".join([pkg, *parts])] = f
    return out


def import_graph() -> dict[str, set[str]]:
    """module → the package modules it imports (`from pkg import submodule` counts as the
    submodule; the parent package's __init__ that Python runs on the way is not an edge)."""
    mods = modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = {f"{node.module}.{a.name}" for a in node.names} & mods.keys()
                deps |= subs or {node.module}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        graph[name] = {d for d in deps if d in mods and d != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def visit(u: str, path: list[str]) -> None:
        state[u] = 1
        path.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == 1:
                found.append(path[path.index(v):] + [v])
            elif v not in state:
                visit(v, path)
        path.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])
    return found


def test_no_import_cycles():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_a_target_family_imports_no_other_family_but_the_ones_it_extends():
    """targets/sm90 and targets/sm80 stand alone; sm100 reuses sm80's mma.sync lowering
    (Blackwell keeps mma.sync for register accumulators). The shared emitter (targets/emit)
    imports no family: families are found through `Sku.codegen` (targets/codegen.py)."""
    extends = {"sm80": set(), "sm90": set(), "sm100": {"sm80"}, "emit": set(), "host": set()}
    for name, deps in import_graph().items():
        parts = name.split(".")
        if parts[:2] != ["cakec", "targets"] or len(parts) < 4:
            continue
        family = parts[2]
        for dep in deps:
            dparts = dep.split(".")
            if dparts[:2] == ["cakec", "targets"] and len(dparts) > 3 and dparts[2] != family:
                assert dparts[2] in extends[family] | {"emit"}, f"{name} imports {dep}"
