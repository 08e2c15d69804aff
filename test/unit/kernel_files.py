"""The example kernels the unit tests walk: every .cake under examples/ at any depth
(examples/corpus/, examples/attention/, …), in a stable order — one place, so a kernel in a
new folder is verified, fuzzed, mutated and emitted like the others."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES: list[Path] = sorted((ROOT / "examples").rglob("*.cake"))
