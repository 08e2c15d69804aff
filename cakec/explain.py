"""`cakec explain CODE`: the long explanation of a diagnostic code, rustc-style, read from the
catalogue (docs/diagnostics/*.md, one `## CAKE-XNNN: title` section per code, and the table
of docs/diagnostics.md for codes documented there), so the text the command prints is the
text the docs show, with its bad example, what cakec prints and the fix.
"""

from __future__ import annotations

import re
from pathlib import Path

_CODE = re.compile(r"(?:CAKE-)?([PTSHDI])(\d{3})", re.I)


def docs_dir() -> Path | None:
    """The installed catalogue (package data of a wheel) or the source tree's docs/."""
    here = Path(__file__).resolve().parent
    for d in (here / "docs", here.parent / "docs"):
        if (d / "diagnostics.md").is_file():
            return d
    return None


def normalise(text: str) -> str | None:
    """`S001`, `cake-s001` and `CAKE-S001` all name CAKE-S001; None if it is not a code."""
    m = _CODE.fullmatch(text.strip())
    return f"CAKE-{m.group(1).upper()}{m.group(2)}" if m else None


def explanation(code: str, docs: Path | None = None) -> str | None:
    """The catalogue's text for `code` (normalised), or None when it is not documented."""
    docs = docs or docs_dir()
    if docs is None:
        return None
    for page in sorted((docs / "diagnostics").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        m = re.search(rf"^## {re.escape(code)}\b.*$", text, re.M)
        if m:
            end = text.find("\n## ", m.end())
            body = text[m.start():end if end >= 0 else len(text)].strip()
            return f"{body[3:]}\n\n(docs/diagnostics/{page.name})\n"
    index = (docs / "diagnostics.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| {re.escape(code)} \| (.*) \|$", index, re.M)
    if row:
        return f"{code}: {row.group(1)}\n\n(docs/diagnostics.md)\n"
    return None
