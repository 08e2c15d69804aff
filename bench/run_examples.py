"""`cakec run --json` on every runnable example (a .cake with its sibling .py): one report
each, written as OUT/<name>.json exactly as `cakec run --json` prints it, validated against
docs/run.schema.json when jsonschema is installed, and a table of what each reached: stage,
exit status, cake vs its baselines (timed side by side in the run), the watchdog build's
cost, % of the speed of light. All in one process, one after another, so the table also
says the context survived every run (a kernel for another GPU stops at `launch`, skipped).

    python3 bench/run_examples.py [--out DIR] [--seeds 3] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def runnable() -> list[Path]:
    cakes = sorted((ROOT / "examples").glob("*.cake")) + sorted(
        (ROOT / "examples" / "attention").glob("*.cake"))
    return [p for p in cakes if p.with_suffix(".py").is_file()]


def _shape(doc: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in (doc["shape"] or {}).items())


def _timing(doc: dict) -> str:
    """cake ms | baselines | watchdog cost | % of the roofline; dashes when not timed."""
    if not doc["timing"]:
        return "— | — | — | —"
    t, sol = doc["timing"], doc["speed_of_light"] or {}
    ms = t["ms"]
    base = ", ".join(f"{k} {v:.4g} ms ({t['speedup'][k]:.2f}x)" for k, v in ms.items()
                     if k not in ("cake", "cake+watchdog"))
    cost = t["watchdog_overhead"]
    pct = sol.get("pct_roofline")
    return (f"{ms['cake']:.4f} | {base} | {'—' if cost is None else f'{cost * 100:+.2f} %'} | "
            f"{'—' if pct is None else f'{pct:.1f} %'}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="/tmp/cake-run-reports")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--only", default=None, help="comma-separated example names")
    args = ap.parse_args()

    import cakec

    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    schema = json.loads((ROOT / "docs" / "run.schema.json").read_text())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    paths = [p for p in runnable() if not args.only or p.stem in args.only.split(",")]
    print("| example | stage | exit | shape | cake ms | baselines (x = theirs / ours) | "
          "watchdog cost | % SOL | schema |\n|---|---|---|---|---|---|---|---|---|",
          flush=True)
    failed = 0
    for path in paths:
        doc = cakec.run(str(path), seeds=args.seeds).to_json()
        (out / f"{path.stem}.json").write_text(json.dumps(doc, indent=1) + "\n")
        verdict = "not checked (no jsonschema)"
        if jsonschema is not None:
            try:
                jsonschema.validate(doc, schema)
                verdict = "valid"
            except jsonschema.ValidationError as e:
                verdict, failed = f"INVALID: {e.message}", failed + 1
        print(f"| {path.stem} | {doc['stage']}{': ' + doc['reason'] if doc['reason'] else ''}"
              f" | {doc['exit_status']} | {_shape(doc)} | {_timing(doc)} | {verdict} |",
              flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
