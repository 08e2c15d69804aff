"""`cakec run`'s text output: the run's diagnostics as `cakec verify` prints them, then one
line of facts (what ran, the stage it reached, numerics, timings)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cakec.diagnostics import Diagnostic, Note, SourceFile, Span, render_text
from cakec.feedback.report import RunReport


@dataclass(frozen=True)
class Text:
    diagnostics: str
    summary: str


def _span(d: dict) -> Span | None:
    return Span(d["file"], d["line"], d["col"], d["end_line"], d["end_col"]) \
        if d.get("file") is not None else None


def from_json(d: dict) -> Diagnostic:
    """A diagnostic back from its `--format json` object (the report stores those)."""
    return Diagnostic(d["severity"], d["code"], d["message"], _span(d),
                      [Note(_span(n), n["message"]) for n in d["notes"]], d["help"])


def render(report: RunReport) -> Text:
    diags = [from_json(d) for d in report.diagnostics]
    sources = {}
    for d in diags:
        for s in [d.span, *(n.span for n in d.notes)]:
            if s is not None and s.file not in sources and Path(s.file).is_file():
                sources[s.file] = SourceFile(s.file, Path(s.file).read_text(encoding="utf-8"))
    text = render_text(diags, sources)
    if report.rejected:
        text = (f"{report.file}: warning: --unchecked: the verifier rejected this kernel "
                f"({', '.join(sorted({d['code'] for d in report.rejected}))}); it ran anyway\n"
                + text)
    return Text(text, summary(report))


def summary(r: RunReport) -> str:
    """One line: what ran, where it stopped, and how fast against each baseline."""
    shape = " ".join(f"{k}={v}" for k, v in (r.shape or {}).items())
    arch = (r.compile or {}).get("arch")
    target = f"{r.target} (built for {arch})" if arch and arch != r.target else r.target
    head = " ".join(x for x in (r.kernel, target, shape) if x) or r.file
    parts = [head]
    if r.stage != "done":
        parts.append(f"stopped at {r.stage}: {r.reason}")
    if r.numerics and r.numerics["seeds"]:
        seeds = r.numerics["seeds"]
        worst = max(seeds, key=lambda s: (not s["correct"], s["rel_err"] or float("inf")))
        verdict = "correct" if r.numerics["correct"] else "WRONG"
        rel = f"{worst['rel_err']:.2e}" if worst["rel_err"] is not None else "nan"
        parts.append(f"{verdict} on {len(seeds)} seed(s): worst rel_err={rel} (tol "
                     f"{r.numerics['tolerance']:.0e}), unwritten={worst['unwritten']}")
    if r.timing:
        sol = r.speed_of_light or {}
        for name, ms in r.timing["ms"].items():
            ratio = f" (cake {r.timing['speedup'][name]:.2f}x)" if name in r.timing["speedup"] \
                else ""
            rate = f" {sol['flops'] / ms / 1e9:.1f} TFLOP/s" if sol.get("flops") else ""
            parts.append(f"{name} {ms:.3f} ms{rate}{ratio}")
        if sol.get("pct_roofline") is not None:
            parts.append(f"{sol['pct_roofline']:.0f}% of the {sol['bound']} roofline")
    return " | ".join(parts)
