"""Distillation records: a GPU failure the verifier did not predict (a hang, a sanitizer
report, wrong numbers, a fault) written as a reproducer bundle under the folder the user
names, ready to become a test/distilled/ case: the .cake, its sibling .py, the run report,
and a README saying how to replay it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any


def write_bundle(root: str, state: Any) -> str:
    """DIR/<kernel>-<stage>-<seed>/ with kernel.cake, the example .py, report.json,
    replay.sh; returns the bundle's path."""
    rep = state.report
    seed = state.seeds[0] if state.seeds else 0
    bundle = Path(root) / f"{rep.kernel or Path(rep.file).stem}-{rep.stage}-{seed}"
    bundle.mkdir(parents=True, exist_ok=True)
    src = Path(rep.file)
    cake = bundle / src.name
    cake.write_text(state.source.text if state.source is not None else src.read_text())
    sibling = src.with_suffix(".py")
    if sibling.is_file():
        shutil.copyfile(sibling, bundle / sibling.name)
    shape = ",".join(f"{k}={v}" for k, v in (rep.shape or {}).items())
    rep.record = str(bundle)
    (bundle / "report.json").write_text(json.dumps(rep.to_json(), indent=2) + "\n")
    (bundle / "replay.sh").write_text(
        "#!/bin/sh\n# Replays the failure this bundle records (same target, shape and seed).\n"
        f"cd \"$(dirname \"$0\")\" && cakec run {cake.name} --target {rep.target} "
        f"--kernel {rep.kernel} --shape {shape} --seed {seed} --seeds {len(state.seeds) or 1} "
        "--json\n")
    (bundle / "replay.sh").chmod(0o755)
    (bundle / "README.md").write_text(
        f"# {rep.kernel}: {rep.stage} on the GPU, which `cakec verify` did not predict\n\n"
        f"- target {rep.target}, shape `{shape}`, seeds {state.seeds}\n"
        f"- why: {rep.reason}\n"
        f"- device: {(rep.device or {}).get('name')}\n\n"
        "`replay.sh` reruns it. To distil it: reduce the kernel to the smallest schedule that "
        "still fails, add the static check that rejects it, and move it under "
        "test/distilled/ with a RUN line expecting the new diagnostic.\n")
    return str(bundle)
