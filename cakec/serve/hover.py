"""What hovering a name shows: the `cakec inspect` ledger entries it is about.

A barrier shows its ledger entry with the waits (and their derived parities), arrivals and
TMA loads that use it; a view its layout and the TMA loads into it; a TMEM region its
columns; a role its warps; `tma_load`/`tma_store`, `mma`, `wait`, `arrive`, `commit` the
entry of the operation on that line (box, coordinates, descriptors, parity). Entries are
the ledger's own (cakec/ledger.py), nothing recomputed. While the file does not verify
there is no ledger: a resource then shows where it is declared, and says so.
"""

from __future__ import annotations

from typing import Any

from cakec.diagnostics import Span
from cakec.serve.analysis import Analysis, Json
from cakec.serve.symbols import Definition, word_at

#: Operations whose hover is the ledger entry recorded at their line: (ledger list, op).
_OPS = {"tma_load": ("tma", "tma_load"), "tma_store": ("tma", "tma_store"),
        "mma": ("descriptors", None), "wait": ("waits", None),
        "arrive": ("arrivals", "arrive"), "commit": ("arrivals", "commit")}


def hover(analysis: Analysis, line: int, col: int) -> tuple[str, Span] | None:
    """Markdown for the name at 1-based (line, col), and the span it covers."""
    found = word_at(analysis.comp.source, line, col)
    if found is None:
        return None
    word, where = found
    symbols = analysis.symbols()
    kernel = symbols.kernel_at(line)
    if kernel is None:
        return None
    ledger = next((k for k in analysis.ledgers() if k["kernel"] == kernel.name), None)
    op = _OPS.get(word) if _is_attribute(analysis, where) else None
    if op is not None:
        entries = _op_entries(ledger, line, *op)
        if not entries:
            return None
        return _card(f"`{word}` · line {line}", entries[0] if len(entries) == 1 else entries), where
    definition = symbols.resolve(word, line)
    if definition is None or definition.kind in ("value", "scalar", "loop"):
        return None
    title = f"{definition.kind} `{word}` · line {definition.span.line}"
    if ledger is None:
        return f"**{title}**\n\nno ledger: the file does not verify yet", where
    return _card(title, _resource_entry(ledger, definition)), where


def _is_attribute(analysis: Analysis, where: Span) -> bool:
    """`x.tma_load` or `lm.wait`, not a local that happens to be called `wait`."""
    text = analysis.comp.source.line(where.line)
    return where.col >= 2 and text[where.col - 2] == "."


def _op_entries(ledger: Json | None, line: int, key: str, op: str | None) -> list[Json]:
    if ledger is None:
        return []
    return [e for e in ledger[key] if e["line"] == line and (op is None or e["op"] == op)]


def _resource_entry(ledger: Json, d: Definition) -> Any:
    name = d.name
    if d.kind == "role":
        return _named(ledger["block"]["roles"], name)
    if d.kind == "barrier":
        entry = _named(ledger["barriers"], name)
        return entry and {**entry,
                          "waits": [w for w in ledger["waits"] if w["barrier"] == name],
                          "arrivals": [a for a in ledger["arrivals"] if a["barrier"] == name],
                          "tma": [t for t in ledger["tma"] if t["barrier"] == name]}
    if d.kind == "view":
        entry = _named(ledger["smem"]["views"], name)
        return entry and {**entry, "tma": [t for t in ledger["tma"] if t["view"] == name]}
    if d.kind == "pool":
        return _named(ledger["smem"]["pools"], name)
    if d.kind == "tmem":
        return _named(ledger["tmem"]["regions"], name)
    if d.kind == "param":  # a tensor: the TMA descriptors built for it
        return [t for t in ledger["tensor_maps"] if t.get("tensor") == name] or None
    return None


def _named(entries: list[Json], name: str) -> Json | None:
    return next((e for e in entries if e["name"] == name), None)


def _card(title: str, entry: Any) -> str:
    """A title, and the entry as `cakec inspect` prints it (some kinds have none)."""
    from cakec.ledger import dump

    body = f"\n\n```json\n{dump(entry)}\n```" if entry is not None else ""
    return f"**{title}**{body}"
