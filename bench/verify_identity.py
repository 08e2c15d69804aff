"""Proof that a speed change left `cakec verify`'s answers alone: the diagnostics (as
`--format json` gives them) and the derived IR of every repo kernel and of seeded fuzz
mutants, for the kernel's own target and every target of `cakec targets`.

    python bench/verify_identity.py --out FILE     # record today's answers (one digest each)
    python bench/verify_identity.py --diff FILE    # compare with FILE, print what differs

Inputs: every .cake under examples/, test/lit/, test/distilled/, test/gpu/ (the walk of
bench/emit_all.py) × (own target + every SKU), and `--mutants N` mutants (test/unit/fuzzing.py's
mutator, seeds `--seed`·1000003 + i, cycling over the example kernels) × `--mutant-targets`
(own target and the first SKUs). Each entry is the SHA-256 of the diagnostics JSON and of the
printed IR after the verify pipeline (empty when no module was built). Exit status 1 when an
entry differs or is missing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "unit"))
sys.path.insert(0, str(ROOT / "bench"))

from emit_all import kernels  # noqa: E402


def inputs(mutants: int, seed: int, mutant_targets: int) -> Iterator[tuple[str, str, str,
                                                                         str | None]]:
    """(key, display path, text, target) of every entry."""
    import fuzzing

    from cakec.targets.sku import SKUS

    targets: list[str | None] = [None, *SKUS]
    for path in kernels():
        rel = path.relative_to(ROOT).as_posix()
        text = path.read_text(encoding="utf-8")
        for target in targets:
            yield f"{rel}@{target or 'own'}", rel, text, target
    for i in range(mutants):
        s = seed * 1_000_003 + i
        kernel = fuzzing.KERNELS[i % len(fuzzing.KERNELS)]
        rel = kernel.relative_to(ROOT).as_posix()
        text, _ = fuzzing.mutate(kernel.read_text(encoding="utf-8"), s)
        for target in targets[:mutant_targets]:
            yield f"mutant:{rel}:{s}@{target or 'own'}", rel, text, target


def answer(path: str, text: str, target: str | None) -> tuple[str, str]:
    """(diagnostics JSON, derived IR text) of one verify."""
    from cakec.diagnostics import render_json
    from cakec.driver import SourceFile, verify_source
    from cakec.ir_text import print_module

    comp = verify_source(SourceFile(path, text), target)
    ir = print_module(comp.module) if comp.module is not None else ""
    return render_json(comp.sink.diagnostics), ir


def digest(diags: str, ir: str) -> str:
    return hashlib.sha256(diags.encode()).hexdigest()[:16] + ":" + \
        hashlib.sha256(ir.encode()).hexdigest()[:16]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the answers' digests here (JSON)")
    ap.add_argument("--diff", type=Path, help="compare with digests written by --out")
    ap.add_argument("--mutants", type=int, default=400)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--mutant-targets", type=int, default=4,
                    help="own target + the first N-1 SKUs for each mutant")
    args = ap.parse_args()
    old = json.loads(args.diff.read_text()) if args.diff else None
    new: dict[str, str] = {}
    differ = verified = 0
    start = time.perf_counter()
    for key, rel, text, target in inputs(args.mutants, args.seed, args.mutant_targets):
        diags, ir = answer(rel, text, target)
        new[key] = digest(diags, ir)
        verified += diags.startswith('{\n  "diagnostics": []')
        if old is not None and old.get(key) != new[key]:
            differ += 1
            print(f"DIFF {key}: {old.get(key)} -> {new[key]}")
    if args.out:
        args.out.write_text(json.dumps(new, indent=0, sort_keys=True) + "\n")
    missing = sorted(set(old) - set(new)) if old is not None else []
    for key in missing:
        print(f"MISSING {key}")
    print(f"{len(new)} entries ({verified} without diagnostics), "
          f"{time.perf_counter() - start:.0f} s" + (f", {differ} differ, {len(missing)} missing"
                                                     if old is not None else ""))
    return 1 if differ or missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
