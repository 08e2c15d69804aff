"""Emit every example, corpus kernel, lit input and GPU-test kernel for every target it verifies for.

    python bench/emit_all.py --out DIR        # write DIR/<file>.<target>.cu, print a summary
    python bench/emit_all.py --diff DIR       # compare today's CUDA with DIR's, byte for byte

What it proves: "verify implies emit" (a kernel that verifies for a target and then fails to
emit is listed as a GAP and the exit status is 1), and, with --diff, that a refactor left the
generated code unchanged.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cakec.targets.emit.emitter import CudaUnit

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("examples", "test/lit", "test/distilled", "test/gpu")


def kernels() -> Iterator[Path]:
    """Every .cake file under the source folders (at any depth: examples/attention/, …), in a
    stable order."""
    for folder in SOURCES:
        yield from sorted((ROOT / folder).glob("**/*.cake"))


def emit_for(path: Path, target: str) -> tuple[bool, dict[str, CudaUnit | None], list[str]]:
    """(verified, kernel name → its CUDA unit or None where it failed, error lines) for one file and target: verified once, and emitted only when it verified."""
    from cakec.api import emit_verified, load
    from cakec.dialects.cake import KernelOp
    from cakec.driver import verify_source

    comp = verify_source(load(str(path)), target)
    if not comp.ok or comp.module is None:
        return False, {}, []
    names = [op.sym_name.data for op in comp.module.ops if isinstance(op, KernelOp)]
    units = {name: emit_verified(comp, kernel=name).unit for name in names}
    errors = [f"{d.code}: {d.message}" for d in comp.sink.diagnostics if d.severity == "error"]
    return True, units, errors


def walk() -> Iterator[tuple[Path, str, str, str | None, list[str]]]:
    """(file, target, kernel, CUDA or None, error lines) for each target the file verifies
    for and each kernel in it."""
    from cakec.targets.sku import SKUS

    for path in kernels():
        for target in SKUS:
            verified, units, errors = emit_for(path, target)
            for kernel, unit in units.items():
                yield path, target, kernel, (unit.source if unit else None), errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="write the CUDA of each (kernel, target) here")
    ap.add_argument("--diff", type=Path, help="compare with the CUDA written earlier by --out")
    args = ap.parse_args()
    emitted = gaps = differ = 0
    for path, target, kernel, cuda, errors in walk():
        name = f"{path.relative_to(ROOT).as_posix().replace('/', '__')}.{kernel}.{target}.cu"
        if cuda is None:
            gaps += 1
            print(f"GAP {path.relative_to(ROOT)} --target {target}: {'; '.join(errors)}")
            continue
        emitted += 1
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / name).write_text(cuda)
        if args.diff:
            old = args.diff / name
            if not old.exists() or old.read_text() != cuda:
                differ += 1
                print(f"DIFF {name}")
    print(f"{emitted} emitted, {gaps} verify-but-not-emit gaps"
          + (f", {differ} differ from {args.diff}" if args.diff else ""))
    return 1 if gaps or differ else 0


if __name__ == "__main__":
    sys.exit(main())
