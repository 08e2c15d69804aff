"""The shipped kernels' sources (the .cake files beside this module), compiled on first use
and cached on disk per (kernel, target, toolkit): a warm process loads the cubin and its
launch metadata without running the front end."""

from __future__ import annotations

import hashlib
import importlib
import json
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cakec.runtime import Kernel

SOURCES = Path(__file__).resolve().parent
#: The packages whose code decides what a .cake file compiles to.
_COMPILER = ("cakec", "cakec.dialects", "cakec.passes", "cakec.targets")

_loaded: dict[tuple[str, str], "Kernel"] = {}
_lock = threading.Lock()


def source(name: str) -> Path:
    """The .cake file of a shipped kernel (examples/ links to the same files)."""
    return SOURCES / f"{name}.cake"


def kernel(name: str, target: str) -> "Kernel":
    """The shipped kernel `name` built for `target`, once per process."""
    k = _loaded.get((name, target))
    if k is None:
        with _lock:
            k = _loaded.get((name, target)) or _build(name, target)
            _loaded[(name, target)] = k
    return k


@lru_cache(maxsize=1)
def _compiler_digest() -> str:
    """A hash of the compiler's own files, subpackages included (the frontend, the emitter
    and every backend live below the top folders), so a changed compiler never serves a
    stale cubin."""
    h = hashlib.sha256()
    for pkg in _COMPILER:
        folder = Path(importlib.import_module(pkg).__file__).parent  # type: ignore[arg-type]
        for f in sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".cuh", ".lark")):
            h.update(str(f.relative_to(folder)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def _build(name: str, target: str) -> "Kernel":
    from cakec import api
    from cakec.runtime import Kernel
    from cakec.targets.host.nvrtc import write_atomic, cache_dir, nvrtc_version

    path = source(name)
    key = hashlib.sha256("\0".join([path.read_text(), target, _compiler_digest(),
                                    "nvrtc-%d.%d" % nvrtc_version()]).encode()).hexdigest()[:24]
    base = cache_dir() / "kernels" / f"{name}-{target}-{key}"
    cubin_path, meta_path = base.with_suffix(".cubin"), base.with_suffix(".json")
    try:
        return Kernel(cubin_path.read_bytes(), json.loads(meta_path.read_text()))
    except (OSError, ValueError):
        pass
    unit = api.emit_unit(str(path), target)
    cubin = api.binary(unit, "cubin")
    write_atomic(cubin_path, cubin)
    write_atomic(meta_path, json.dumps(unit.metadata).encode())
    return Kernel(cubin, unit.metadata)
