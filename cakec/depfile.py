"""Make/Ninja depfiles for `cakec emit -MD -MF DEPFILE` (docs/aot.md).

A depfile says which inputs each output was built from, so a build tool reruns `cakec emit`
when any of them changes: `out.cu out.h: kernel.cake`. Today a kernel is one .cake file;
when the language grows includes or imports, `dependencies` lists them too.

The syntax is the GCC `-MD` subset both Make and Ninja read: targets, a colon, the
prerequisites, with spaces and `#` escaped by a backslash and `$` doubled.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence


def dependencies(source: str) -> list[str]:
    """Every file the output of compiling `source` depends on: the source itself."""
    return [source]


def _escape(path: str) -> str:
    if "\n" in path or "\r" in path:
        raise ValueError(f"a depfile cannot name a path with a line break: {path!r}")
    return path.replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")


def render(targets: Sequence[str], deps: Sequence[str]) -> str:
    """`t1 t2: d1 d2` with one prerequisite per continuation line."""
    head = " ".join(_escape(t) for t in targets) + ":"
    return " \\\n  ".join([head, *(_escape(d) for d in deps)]) + "\n"


def write(path: str, targets: Sequence[str], deps: Sequence[str]) -> None:
    """Write the depfile through a temporary file and a rename, so a build tool never reads
    half of one."""
    out = Path(path)
    tmp = out.with_name(out.name + f".{os.getpid()}.tmp")
    try:
        tmp.write_text(render(targets, deps))
        os.replace(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
