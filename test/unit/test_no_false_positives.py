"""Zero false positives (issue 17): every correct kernel the project ships verifies. The
examples, the corpus and every lit near miss (`*_ok.cake`) run through the whole `verify`
pipeline, and none may get an error: a protocol witness that no launch produces, or bounds
written in two equal forms treated as different trip counts, fail here."""

from __future__ import annotations

from pathlib import Path

import pytest

from cakec.driver import read_source, verify_source
from kernel_files import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
# A near miss that only runs an example (its RUN lines name it) holds no kernel of its own.
KERNELS = EXAMPLES + sorted(
    p for p in (ROOT / "test/lit").rglob("*_ok.cake") if "@cake.schedule" in p.read_text())


def test_the_walk_finds_the_kernels():
    assert len(KERNELS) >= 60


@pytest.mark.parametrize("path", KERNELS, ids=lambda p: str(p.relative_to(ROOT)))
def test_correct_kernel_verifies(path: Path):
    diags = verify_source(read_source(str(path))).sink.diagnostics
    errors = [f"{d.code} {d.message}" for d in diags if d.severity == "error"]
    assert not errors
