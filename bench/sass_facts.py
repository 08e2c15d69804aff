"""SASS facts for every example: the instructions that prove the intended hardware paths
were generated (HGMMA / UTMALDG / SYNCS on sm_90a, UTC*MMA / LDTM on sm_100a, HMMA / LDGSTS
on sm_80) and ptxas's spill report. Needs NVRTC and cuobjdump, not a GPU.

    python3 bench/sass_facts.py [EXAMPLE.cake:TARGET ...]
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ["gemm_bf16.cake:sm_90a", "gemm_sm80.cake:sm_80", "gemm_tcgen05.cake:sm_100a",
           "kmeans_assign.cake:sm_90a"]
OPCODES = ["HGMMA", "UTMALDG", "SYNCS", "UTCHMMA", "UTCQMMA", "UTCMMA", "LDTM", "HMMA",
           "LDGSTS", "LDSM", "LDL", "STL"]


def facts(path: Path, target: str) -> str:
    from cakec import api
    from cakec.targets.host.nvrtc import ptxas_report
    from cakec.targets.host.toolkit import find_tool

    result = api.emit(api.load(str(path)), target)
    if result.unit is None:
        return f"{path.name} {target}: does not emit ({len(result.comp.sink.diagnostics)} diags)"
    cubin = api.binary(result.unit, "cubin")
    spills = re.findall(r"(\d+) bytes spill stores", ptxas_report(result.unit.source,
                                                                  target=target))
    counts = "cuobjdump missing"
    tool = find_tool("cuobjdump")
    if tool:
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(cubin)
            f.flush()
            sass = subprocess.run([tool, "--dump-sass", f.name], capture_output=True,
                                  text=True).stdout
        found = {op: len(re.findall(rf"\b{op}[.\s]", sass)) for op in OPCODES}
        counts = " ".join(f"{op}={n}" for op, n in found.items() if n)
    return f"{path.name} {target}: spill stores {spills or ['0']} bytes; SASS {counts}"


def main(argv: list[str]) -> int:
    for item in argv or DEFAULT:
        name, target = item.split(":")
        path = ROOT / "examples" / name
        if path.exists():
            print(facts(path, target), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
