"""The long fuzz run (issue 17): damaged example and corpus kernels through `cakec verify` and
`cakec emit`, for each kernel's own target and every target of `cakec targets`.

    python bench/fuzz.py [--inputs N] [--seed S] [--kernel NAME] [--show K] [--corpus WHICH]
                         [--ops number,...] [--own-target] [--timeout SECONDS]

`--corpus examples` (the default) damages every .cake under examples/ (cakec/kernels/ is linked
from there); `--corpus lit` the kernels of test/lit/ and test/distilled/ (valid and invalid:
an invalid kernel damaged further must still get a diagnostic); `--corpus all` both.

Prints the inputs tried, how many verified, the failures found (internal errors, uncaught
exceptions, exit statuses other than 0/1, emits that fail after a clean verify, inputs that
run past --timeout) and their rate per 1000 inputs, grouped by their first line, each with
one reproducer (kernel, seed, target). `test/unit/test_fuzz.py` runs the same oracle,
bounded, in CI.
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "unit"))

import fuzzing  # noqa: E402

#: The lit and distilled kernels: small, each aimed at one rule, many of them invalid on purpose.
LIT_KERNELS = sorted([*(fuzzing.ROOT / "test" / "lit").rglob("*.cake"),
                      *(fuzzing.ROOT / "test" / "distilled").glob("*.cake")])


class Hang(BaseException):
    """Raised by the timer in an input that runs past --timeout (BaseException: click's test
    runner, which catches Exception, lets it through)."""


def _alarm(signum: int, frame: object) -> None:
    raise Hang


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--kernel", default=None, help="only kernels whose name contains this")
    ap.add_argument("--show", type=int, default=3, help="reproducers printed per failure kind")
    ap.add_argument("--corpus", choices=("examples", "lit", "all"), default="examples")
    ap.add_argument("--ops", default="", help="comma-separated mutation operators (default: all "
                    "of " + ", ".join(sorted(fuzzing.OPERATORS)) + "); `number` alone keeps "
                    "most inputs parsing and many verifying, which tests verify-implies-emit")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds one input may take before it counts as a hang")
    ap.add_argument("--own-target", action="store_true",
                    help="only each kernel's own target (no --target overrides)")
    args = ap.parse_args()
    from cakec.targets.sku import SKUS

    corpus = {"examples": fuzzing.KERNELS, "lit": LIT_KERNELS,
              "all": [*fuzzing.KERNELS, *LIT_KERNELS]}[args.corpus]
    kernels = [k for k in corpus if not args.kernel or args.kernel in k.name]
    ops = tuple(o for o in args.ops.split(",") if o)
    unknown = set(ops) - set(fuzzing.OPERATORS)
    if unknown:
        ap.error(f"unknown operators {sorted(unknown)}")
    targets: list[str | None] = [None] if args.own_target else [None, *SKUS]
    kinds: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    verified = 0
    start = time.perf_counter()
    for i in range(args.inputs):
        seed = args.seed * 1_000_003 + i
        kernel = kernels[i % len(kernels)]
        target = targets[(i // len(kernels)) % len(targets)]
        text, applied = fuzzing.mutate(kernel.read_text(encoding="utf-8"), seed, ops=ops)
        signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, args.timeout)
        try:
            outcome = fuzzing.check(text, target)
        except Hang:
            outcome = fuzzing.Outcome(False, f"hang: verify + emit ran past {args.timeout:g} s")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        verified += outcome.verified
        if outcome.failure:
            kind = re.sub(r"\d+", "N", outcome.failure)[:160]
            kinds[kind] += 1
            found = (f"{kernel.relative_to(fuzzing.ROOT)} seed={seed} target={target or 'own'} "
                     f"ops={'+'.join(applied)}: {outcome.failure[:300]}")
            examples.setdefault(kind, []).append(found)
            print(f"failure: {found}", file=sys.stderr, flush=True)  # seen while a long run runs
    elapsed = time.perf_counter() - start
    failures = sum(kinds.values())
    print(f"inputs tried: {args.inputs} ({len(kernels)} {args.corpus} kernels x "
          f"{len(targets)} targets, operators {args.ops or 'all'}, seed {args.seed}) in "
          f"{elapsed:.1f} s ({args.inputs / elapsed:.1f} inputs/s)")
    print(f"verified: {verified}")
    print(f"failures: {failures} ({1000 * failures / max(args.inputs, 1):.2f} per 1000 inputs)")
    for kind, n in kinds.most_common():
        print(f"\n{n} x {kind}")
        for line in examples[kind][:args.show]:
            print(f"  {line}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
