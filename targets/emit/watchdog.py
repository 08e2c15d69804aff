"""Watchdog builds (`cakec emit --watchdog`, on under `cakec run`): what the emitter needs to
turn every `lm.wait` into a bounded spin (targets/emit/watchdog.cuh) and the table that lets
the host name a stuck wait in the author's terms.

Each wait gets a site number; the site table (file, line, column, role, barrier and its
producers) travels with the `CudaUnit`, and cakec/feedback/watchdog.py turns the device's
records (site, block, warp, stage, parity, phases seen) into CAKE-R001 diagnostics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: The default budget of one wait: long enough that no healthy wait on a loaded GPU reaches
#: it (a whole GEMM tile stage is microseconds), short enough to reject a hang in ~2 s.
DEFAULT_BUDGET_MS = 1500.0

_HEADER = Path(__file__).resolve().parent / "watchdog.cuh"


@dataclass
class Watchdog:
    """One watchdog build's options and, once emitted, its wait sites and roles."""

    budget_ms: float = DEFAULT_BUDGET_MS
    sites: list[dict] = field(default_factory=list)
    roles: dict[str, dict] = field(default_factory=dict)

    def source(self) -> str:
        """The budget's #define, then the device helpers."""
        ns = max(int(self.budget_ms * 1e6), 1)
        return f"#define CAKE_WD_BUDGET_NS {ns}ull\n" + _HEADER.read_text()

    def site(self, **facts: object) -> int:
        self.sites.append(dict(facts))
        return len(self.sites) - 1

    def table(self) -> dict:
        """What the host reads back (docs/run.md, `watchdog` in the run report)."""
        return {"budget_ms": self.budget_ms, "sites": self.sites, "roles": self.roles}
