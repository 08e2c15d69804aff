"""Emitted kernels and their NVRTC builds, shared by the test modules that check the same
(kernel, target): test_targets_assemble (PTX, cubin, ptxas), test_wgmma_pipeline (ptxas's
report) and test_emit (spills). The heaviest kernels spend tens of seconds in ptxas; each
module used to pay it again.

The ptxas report is kept on disk beside the cubin NVRTC's cache holds for the same build
(same key: source, target, options, NVRTC version), under a lock per build: with parallel
workers (`pytest -n auto`, the README's test command) the first to need a build makes it
and the others wait for it and read it. Emitted units are kept per process.
"""

from __future__ import annotations

import fcntl
from functools import cache
from pathlib import Path

from cakec import api
from cakec.targets.emit.emitter import CudaUnit
from cakec.targets.host import nvrtc


@cache
def _emitted(path: Path, target: str | None, text: str) -> CudaUnit:
    result = api.emit(api.load(str(path)), target)
    assert result.unit is not None, [d.message for d in result.comp.sink.diagnostics]
    return result.unit


def unit(path: Path, target: str | None = None) -> CudaUnit:
    """The CUDA unit `api.emit` gives for `path` (keyed by its text too: an edited file is
    emitted again)."""
    return _emitted(path, target, path.read_text())


@cache
def cubin_and_report(source: str, target: str) -> tuple[bytes, str]:
    """(cubin, ptxas's -v report) of `nvrtc.compile_cubin_verbose`, made once for all
    workers; it leaves the cubin in NVRTC's disk cache, where `api.binary(unit, "cubin")`
    then finds it."""
    entry = nvrtc.cache_entry(source, target, "cubin")  # where compile_cubin_verbose puts it
    report = entry.with_suffix(".ptxas.log")
    entry.parent.mkdir(parents=True, exist_ok=True)
    with open(entry.with_suffix(".ptxas.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if report.exists():
            return nvrtc.compile_cuda(source, target=target, output="cubin"), report.read_text()
        cubin, log = nvrtc.compile_cubin_verbose(source, target=target)
        nvrtc.write_atomic(report, log.encode())
        return cubin, log


def ptxas_report(unit: CudaUnit) -> str:
    return cubin_and_report(unit.source, unit.target)[1]
