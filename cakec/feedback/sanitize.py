"""`cakec run --sanitize TOOL`: one launch under compute-sanitizer (racecheck, synccheck,
memcheck, initcheck), its reports mapped back to .cake lines.

The kernel is rebuilt with NVRTC `-lineinfo`. A report names a PC (and the CUDA line of the
innermost, often inlined, helper); nvdisasm's line table gives each PC's outermost frame, the
line of the kernel body it was inlined at, and the nearest `// file.cake:L` marker the emitter
wrote at or above that line is the .cake line. Without nvdisasm the report's own CUDA line is
mapped the same way. The watchdog stays on (budget x20: the sanitizer slows every wait).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cakec.diagnostics import Diagnostic, Note, Span

CODES = {"racecheck": "CAKE-R010", "synccheck": "CAKE-R011", "memcheck": "CAKE-R012",
         "initcheck": "CAKE-R013"}
_MARKER = re.compile(r"^\s*// (?P<file>[^:\s]+\.cake):(?P<line>\d+)(?::\s?(?P<text>.*))?$")
_ROLE = re.compile(r"^(\w+)\s*=\s*lm\.role\(")
# "Write access at kernel+0x1a20 in /tmp/k.cu:123:kernel"; the function may be a C++ name
# with spaces, so everything up to " in FILE:LINE" is the place.
_ACCESS = re.compile(r"(?:(?P<kind>Read|Write) access )?at (?P<at>.+?) in (?P<file>[^\s:]+):"
                     r"(?P<line>\d+)")
_NVDISASM_LINE = re.compile(r'line (\d+)')
_PC = re.compile(r"/\*([0-9a-f]{4,})\*/")
_SANITIZER_TIMEOUT_S = 300


def find_tool(name: str) -> str | None:
    for d in (None, "/usr/local/cuda/bin"):
        path = shutil.which(name, path=d) if d else shutil.which(name)
        if path:
            return path
    return None


class Markers:
    """CUDA line -> (.cake line, its text, the role whose branch holds it)."""

    def __init__(self, source: str):
        self.at: dict[int, tuple[int, str, str | None]] = {}
        role = None
        for n, text in enumerate(source.splitlines(), 1):
            m = _MARKER.match(text)
            if m:
                body = (m.group("text") or "").strip()
                r = _ROLE.match(body)
                role = r.group(1) if r else role
                self.at[n] = (int(m.group("line")), body, role)
        self.lines = sorted(self.at)

    def cake_line(self, cuda_line: int) -> tuple[int, str, str | None] | None:
        import bisect

        i = bisect.bisect_right(self.lines, cuda_line) - 1
        return self.at[self.lines[i]] if i >= 0 else None


def outermost_lines(cubin: bytes) -> dict[int, tuple[int, str]]:
    """PC offset -> (the outermost CUDA line of its inline chain, the SASS opcode), from
    nvdisasm -gi; {} when nvdisasm is not installed."""
    tool = find_tool("nvdisasm")
    if tool is None:
        return {}
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        return line_table(subprocess.run([tool, "-gi", "-c", f.name], capture_output=True,
                                         text=True, timeout=120).stdout)


def line_table(text: str) -> dict[int, tuple[int, str]]:
    """`nvdisasm -gi` text -> PC offset -> (outermost CUDA line, SASS opcode). Before each
    run of instructions nvdisasm prints its inline chain one frame per `//## File` line,
    innermost first (`line 498 inlined at ..., line 556`, then `line 556 inlined at ...,
    line 973`, then `line 973`): the last line of the group is the kernel body's frame."""
    out: dict[int, tuple[int, str]] = {}
    group: list[str] = []
    current: int | None = None
    for line in text.splitlines():
        if "//## File" in line:
            group.append(line)
            continue
        if group:
            current = int(_NVDISASM_LINE.findall(group[-1])[-1])
            group = []
        m = _PC.search(line)
        if m and current is not None:
            ins = line[m.end():].split()
            out[int(m.group(1), 16)] = (current, ins[0] if ins and not ins[0].startswith("@")
                                        else (ins[1] if len(ins) > 1 else ""))
    return out


def parse(log: str) -> list[list[dict]]:
    """The sanitizer's reports: each a list of accesses (kind, pc, CUDA line), headline first."""
    reports: list[list[dict]] = []
    head: str | None = None
    for raw in log.splitlines():
        if not raw.startswith("========="):
            continue
        line = raw[len("========="):].strip()
        starts = re.match(r"(ERROR|Error|Invalid|Uninitialized|Barrier|Race|Warning|WARN)", line)
        if starts and "Race reported" not in line and "at " not in line:
            head = line
            reports.append([{"headline": head}])
            continue
        m = _ACCESS.search(line)
        if m is None:
            continue
        pc = re.findall(r"0x([0-9a-f]+)", m.group("at"))
        access = {"kind": m.group("kind"), "pc": int(pc[-1], 16) if pc else None,
                  "cuda_line": int(m.group("line")), "text": line}
        if "Race reported" in line:
            reports.append([{"headline": line.split(" between")[0].replace("ERROR: ", "")
                             .replace("Error: ", "")}, access])
        elif reports:
            reports[-1].append(access)
    return [r for r in reports if len(r) > 1]


def _col(source: str | None, line: int) -> int:
    """The column of the statement's first character (markers carry lines only)."""
    lines = (source or "").splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text) - len(text.lstrip()) + 1


#: NVRTC before 13.1 compiles `cp.async.mbarrier.arrive.noinc` so that racecheck sees a plain
#: arrival (compute-sanitizer 2025.4 release notes: a 13.1+ compiler is needed to tell the
#: cp.async arrivals apart): it cannot order a cp.async write before the reads its mbarrier
#: releases, and reports every cp.async → mbarrier → ld.shared/ldmatrix pipeline. Seen on the
#: H200 (NVRTC 13.0): the correct examples/gemm_sm80.cake, 8 reports (docs/run.md).
CP_ASYNC_ORDERED_SINCE = (13, 1)


def diagnostics(tool: str, reports: list[list[dict]], markers: Markers,
                pcs: dict[int, tuple[int, str]], cake_file: str,
                cake_source: str | None = None, cp_async_blind: bool = False
                ) -> list[Diagnostic]:
    """One diagnostic per distinct (headline, .cake lines) report. `pcs`: PC offset ->
    (outermost CUDA line, SASS opcode), from `outermost_lines`. `cp_async_blind`: the cubin
    came from an NVRTC whose cp.async arrivals racecheck cannot see (CP_ASYNC_ORDERED_SINCE);
    a race whose write is a cp.async (LDGSTS) is then a warning, said to be unconfirmed."""
    out: list[Diagnostic] = []
    seen: set[tuple] = set()
    for rep in reports:
        headline, accesses = rep[0]["headline"], rep[1:]
        places = []
        for a in accesses:
            line, opcode = pcs.get(a["pc"], (a["cuda_line"], "")) if a["pc"] is not None \
                else (a["cuda_line"], "")
            places.append((a, markers.cake_line(line), opcode))
        key = (headline, tuple(p[1][0] if p[1] else None for p in places))
        if key in seen:
            continue
        seen.add(key)
        first = next((p for p in places if p[1]), None)
        span = Span(cake_file, first[1][0], _col(cake_source, first[1][0])) if first else None
        what: list[str] = []
        for a, where, _ in places:
            kind = f"a {a['kind'].lower()} " if a["kind"] else ""
            text = (f"{kind}by role {where[2]} (line {where[0]})" if where and where[2]
                    else f"{kind}at line {where[0]}" if where else
                    f"{kind}outside the kernel body (CUDA line {a['cuda_line']})")
            if text not in what:  # one instruction per site is enough: ldmatrix × 4 is one read
                what.append(text)
        race = headline.startswith("Race reported")
        message = (f"{tool}: shared-memory race between " if race
                   else f"{tool}: {headline.rstrip('.')}: ") + " and ".join(what)
        notes: list[Note] = []
        noted: set[tuple] = set()
        for a, where, _ in places[1:]:
            if where and (a["kind"], where[0]) not in noted:
                noted.add((a["kind"], where[0]))
                notes.append(Note(Span(cake_file, where[0], _col(cake_source, where[0])),
                                  f"the {(a['kind'] or 'other').lower()} access: {where[1]}"))
        severity = "error"
        if race and cp_async_blind and any(a["kind"] == "Write" and op.startswith("LDGSTS")
                                           for a, _, op in places):
            severity, message = "warning", message + " (unconfirmed: the write is a cp.async)"
            notes.append(Note(None, "racecheck cannot order a cp.async write before the reads "
                              "its mbarrier releases in code from NVRTC < "
                              f"{CP_ASYNC_ORDERED_SINCE[0]}.{CP_ASYNC_ORDERED_SINCE[1]}: it "
                              "reports correct cp.async pipelines the same way"))
        out.append(Diagnostic(severity, CODES[tool], message, span, notes,
                              help="order the two accesses with a barrier wait (a report on a "
                                   "kernel the verifier accepted is a verifier gap: `cakec run "
                                   "--record DIR` keeps a reproducer to distil)"))
    return out


def run_sanitizer(st: Any, tool: str) -> dict[str, Any]:
    """Rebuild with -lineinfo, launch once under the tool, map its reports."""
    from cakec import api
    from cakec.feedback import launch_once
    from cakec.targets.codegen import emit_cuda
    from cakec.targets.emit.watchdog import Watchdog
    from cakec.targets.host.nvrtc import compile_cuda, nvrtc_version

    rep = st.report
    exe = find_tool("compute-sanitizer")
    if exe is None:
        return {"tool": tool, "available": False, "reports": [], "log_tail": ""}
    plain = api.emit(st.source, rep.target, unchecked=rep.unchecked, kernel=rep.kernel)
    unit = emit_cuda(plain.comp.module, plain.comp.ctx, plain.comp.sources,
                     Watchdog(st.watchdog_ms * 20), rep.kernel)
    cubin = compile_cuda(unit.source, target=st.arch, output="cubin", name=f"{unit.kernel}.cu",
                         extra_options=("-lineinfo",))
    with tempfile.TemporaryDirectory() as tmp:
        folder = launch_once.write(Path(tmp), cubin, unit.metadata | {"target": st.arch},
                                   rep.file, rep.shape,
                                   st.seeds[0] if st.seeds else 0, watchdog=True)
        cmd = [exe, "--tool", tool, "--print-limit", "64",
               sys.executable, "-m", "cakec.feedback.launch_once", str(folder)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  timeout=_SANITIZER_TIMEOUT_S)
            log, status = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            log, status = f"{e.stdout or ''}{e.stderr or ''}\n(timed out)", None
    reports = parse(log)
    diags = diagnostics(tool, reports, Markers(unit.source), outermost_lines(cubin), rep.file,
                        st.source.text, cp_async_blind=nvrtc_version() < CP_ASYNC_ORDERED_SINCE)
    rep.diagnostics += [d.to_json() for d in diags]
    return {"tool": tool, "available": True, "exit_status": status,
            "reports": [d.to_json() for d in diags], "raw_reports": len(reports),
            "log_tail": "\n".join(log.splitlines()[-40:])}
