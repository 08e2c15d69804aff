"""Where protocol errors land (issue 17, gap 6): at the line that was broken, or downstream.

    python bench/first_wrong_event.py [--kernel NAME] [--show K]

Damages every example kernel one line at a time — the mutation test's stage-index operator
(a stage argument, view subscript or stage counter pinned to 0 or shifted by one) and a
release moved above the line before it (an `lm.arrive`/`lm.commit` above the read it
releases) — and, for each mutant the safety gate rejects with a barrier-protocol error,
compares the line of its first error with the mutated line. "before" is where the error was
reported without the first-wrong-event search (the failure the simulation found: the
CAKE-S025/S026 error's "this causes" note), "after" where it is reported now. Also prints
bench/broken/*.cake, each with its first error. A mutated `s = ... % 4` line changes the stage
of every use: there no error can stand on the mutated line, so the table counts those apart.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "unit"))

from kernel_files import EXAMPLES  # noqa: E402
from test_mutations import stage_index  # noqa: E402

from cakec.driver import read_source, verify_source  # noqa: E402

#: barrier-protocol findings of the simulation (and the two that relocate them)
PROTOCOL = {"CAKE-S001", "CAKE-S002", "CAKE-S003", "CAKE-S004", "CAKE-S010", "CAKE-S013",
            "CAKE-S014", "CAKE-S018", "CAKE-S021", "CAKE-S025", "CAKE-S026"}
CAUSES = re.compile(r"^this causes: .*\[(CAKE-S\d{3})\]$")


def release_up(text: str):
    """An `lm.arrive`/`lm.commit` swapped with the line above it (same indentation, not a
    wait or a block opener): the release now precedes what it was meant to follow."""
    lines = text.split("\n")
    for i in range(1, len(lines)):
        line, above = lines[i], lines[i - 1]
        if not re.match(r"^\s*lm\.(arrive|commit)\(", line):
            continue
        indent = len(line) - len(line.lstrip())
        if (len(above) - len(above.lstrip()) != indent or above.rstrip().endswith(":")
                or "lm.wait(" in above or above.lstrip().startswith("#")):
            continue
        new = lines[:i - 1] + [line, above] + lines[i + 1:]
        yield i - 1, "release_up", "\n".join(new)


def first_error(path: str, text: str):
    diags = verify_source(read_source(path, text)).sink.diagnostics
    return next((d for d in diags if d.severity == "error"), None)


def lines_of(d) -> tuple[int, int]:
    """(line before the search, line now) of a diagnostic."""
    now = d.span.line if d.span else 0
    for n in d.notes:
        if CAUSES.match(n.message):
            return (n.span.line if n.span else 0), now
    return now, now


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default=None, help="only kernels whose path contains this")
    ap.add_argument("--show", type=int, default=0,
                    help="mutants printed whose error is not at the mutated line")
    args = ap.parse_args()
    counts: Counter[str] = Counter()
    shown = 0
    for path in EXAMPLES:
        if args.kernel and args.kernel not in str(path):
            continue
        rel = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        mutants = [(i, d, t, "stage") for i, d, t in stage_index(text)]
        mutants += [(i, d, t, "release") for i, d, t in release_up(text)]
        for i, detail, new, op in mutants:
            d = first_error(rel, new)
            if d is None or d.code not in PROTOCOL:
                continue
            line = i + 1  # the mutated line (a moved release: where it stands now)
            before, after = lines_of(d)
            kind = "counter" if re.match(r"^\s*\w+ = .*%", new.split("\n")[i]) else op
            counts[f"{kind} rejected"] += 1
            counts[f"{kind} at mutated line before"] += before == line
            counts[f"{kind} at mutated line after"] += after == line
            counts[f"{kind} relocated"] += before != after
            counts[f"{kind} moved away"] += before == line != after
            if after != line and kind != "counter" and shown < args.show:
                shown += 1
                print(f"  {rel}:{line} {detail}: line {before} -> {after} [{d.code}]")
    print("mutants rejected with a protocol error, first error at the mutated line "
          "(before the first-wrong-event search -> now):")
    for kind in ("stage", "release", "counter"):
        n = counts[f"{kind} rejected"]
        if n:
            print(f"  {kind:8} {n:4} rejected: {counts[f'{kind} at mutated line before']:4} -> "
                  f"{counts[f'{kind} at mutated line after']:4} at the mutated line "
                  f"({counts[f'{kind} relocated']} relocated, "
                  f"{counts[f'{kind} moved away']} of them away from the mutated line)")
    print("bench/broken:")
    for path in sorted((ROOT / "bench" / "broken").glob("*.cake")):
        rel = str(path.relative_to(ROOT))
        d = first_error(rel, path.read_text(encoding="utf-8"))
        if d is None:
            print(f"  {path.name:28} verifies")
            continue
        before, after = lines_of(d)
        moved = f"line {before} -> {after}" if before != after else f"line {after}"
        print(f"  {path.name:28} {d.code} {moved}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
