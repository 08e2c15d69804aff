"""One place that compiles a text for the server and remembers the answer.

Both front doors (JSON-RPC and LSP) ask the same three questions — does it verify, what is
its ledger, what CUDA does it emit — about a (path, text, target). The answers are kept in a
small LRU keyed by exactly that triple, so an agent that re-verifies an unchanged file, or
an editor that hovers after the diagnostics were published, pays nothing for the compile.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cakec.diagnostics import Diagnostic, SourceFile

if TYPE_CHECKING:
    from cakec.driver import Compilation
    from cakec.serve.symbols import Symbols

Json = dict[str, Any]

#: Documents (or files) kept compiled; an editor has a handful open, an agent one or two.
CACHE_SIZE = 16


@dataclass
class Analysis:
    """A verified (or rejected) compilation and what is derived from it on demand."""

    comp: "Compilation"
    #: What verify said; emission may add diagnostics to `comp.sink` later, and a repeated
    #: verify of the same text must not see them.
    verified: list[Diagnostic] = field(init=False)
    _ledgers: list[Json] | None = field(default=None, init=False)
    _symbols: "Symbols | None" = field(default=None, init=False)
    _emitted: Json | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.verified = list(self.comp.sink.diagnostics)

    @property
    def ok(self) -> bool:
        return not any(d.severity == "error" for d in self.verified)

    def diagnostics_json(self) -> list[Json]:
        """The shape of `cakec verify --format json`."""
        return [d.to_json() for d in self.verified]

    def ledgers(self) -> list[Json]:
        """One `cakec inspect` ledger per kernel; empty unless every gate passed (inspect
        prints a ledger only for a valid kernel, and so does the server)."""
        if self._ledgers is None:
            self._ledgers = []
            if self.ok and self.comp.module is not None:
                from cakec.ledger import kernel_ledger
                from cakec.passes.derive_common import kernels

                self._ledgers = [kernel_ledger(k) for k in kernels(self.comp.module)]
        return self._ledgers

    def ledger(self) -> Json | list[Json] | None:
        """Exactly what `cakec inspect` prints: an object, or a list for several kernels."""
        entries = self.ledgers()
        if not entries:
            return None
        return entries[0] if len(entries) == 1 else entries

    def symbols(self) -> "Symbols":
        if self._symbols is None:
            from cakec.serve.symbols import Symbols

            self._symbols = Symbols.of(self.comp.tree)
        return self._symbols

    def emitted(self) -> Json:
        """CUDA C++ and launch metadata (`cakec emit --emit cuda|metadata`); `ok` false with
        the diagnostics when the kernel does not verify or cannot be emitted."""
        if self._emitted is None:
            from cakec import api

            unit = api.emit_verified(self.comp).unit
            self._emitted = {
                "ok": unit is not None,
                "diagnostics": [d.to_json() for d in self.comp.sink.diagnostics],
                "kernel": unit.kernel if unit else None, "target": unit.target if unit else None,
                "cuda": unit.source if unit else None, "metadata": unit.metadata if unit else None,
            }
        return self._emitted


class Analyzer:
    """Compiles on demand, remembering the last CACHE_SIZE (path, text, target) answers."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._cache: OrderedDict[tuple[str, str, str | None], Analysis] = OrderedDict()

    def analyse(self, path: str, text: str, target: str | None = None) -> Analysis:
        key = (path, text, target)
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
            return found
        from cakec.driver import verify_source

        analysis = Analysis(verify_source(SourceFile(path, text), target))
        self._cache[key] = analysis
        if len(self._cache) > self._size:
            self._cache.popitem(last=False)
        return analysis
