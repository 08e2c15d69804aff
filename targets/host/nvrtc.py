"""CUDA C++ -> PTX / cubin through NVRTC (cuda.bindings.nvrtc), with a disk cache.

NVRTC runs without a GPU, so every target can be built and checked on any machine.
cuda.bindings is imported inside the functions: importing cakec.targets must stay cheap
and must work where the CUDA Python bindings are absent.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Literal, Sequence

from cakec.errors import CakeToolkitError, NvrtcError  # re-exported (cakec.errors)

_TARGET = re.compile(r"^sm_(\d+)([af]?)$")
_BASE_OPTIONS = ("-std=c++17",)


@lru_cache(maxsize=1)
def _nvrtc():
    try:
        from cuda.bindings import nvrtc

        nvrtc.nvrtcVersion()  # loads libnvrtc now, so a missing library is said so here
    except Exception as e:  # noqa: BLE001 - ImportError, or cuda.pathfinder's not-found error
        raise CakeToolkitError(f"NVRTC cannot be loaded ({type(e).__name__}: "
                               f"{str(e).splitlines()[0] if str(e) else ''}); install it with "
                               "`pip install cuda-bindings nvidia-cuda-nvrtc`") from e
    return nvrtc


def _check(result, what: str, prog=None):
    err = result[0]
    if int(err) != 0:
        log = _log(prog) if prog is not None else ""
        raise NvrtcError(f"{what} failed: {err.name if hasattr(err, 'name') else err}", log)
    return result[1:]


def _log(prog) -> str:
    nvrtc = _nvrtc()
    _, size = nvrtc.nvrtcGetProgramLogSize(prog)
    # A fresh bytearray: `b" " * 1` is CPython's shared one-byte object, and NVRTC writing
    # into it would corrupt every later b" " in the process.
    buf = bytearray(size)
    nvrtc.nvrtcGetProgramLog(prog, buf)
    return bytes(buf).rstrip(b"\x00 ").decode(errors="replace")


def nvrtc_version() -> tuple[int, int]:
    """(major, minor) of the NVRTC library that cuda.bindings loads."""
    major, minor = _check(_nvrtc().nvrtcVersion(), "nvrtcVersion")
    return int(major), int(minor)


def arch_option(target: str, output: Literal["ptx", "cubin"]) -> str:
    """`-arch=` value: real SASS (sm_XX[a]) for a cubin, virtual (compute_XX[a]) for PTX."""
    m = _TARGET.match(target)
    if not m:
        raise ValueError(f"unknown target {target!r}; expected e.g. 'sm_90a', 'sm_100a', 'sm_80'")
    if output == "cubin":
        return f"-arch={target}"
    if output == "ptx":
        return f"-arch=compute_{m.group(1)}{m.group(2)}"
    raise ValueError(f"output must be 'ptx' or 'cubin', not {output!r}")


def _compile(source: str, options: Sequence[str], name: str,
             output: Literal["ptx", "cubin"]) -> tuple[bytes, str]:
    """One uncached NVRTC run: (binary, log)."""
    nvrtc = _nvrtc()
    (prog,) = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                     "nvrtcCreateProgram")
    try:
        opts = [o.encode() for o in options]
        _check(nvrtc.nvrtcCompileProgram(prog, len(opts), opts), f"compiling {name}", prog)
        get_size, get = ((nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN) if output == "cubin"
                         else (nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX))
        (size,) = _check(get_size(prog), f"reading the {output} size")
        buf = bytearray(size)
        _check(get(prog, buf), f"reading the {output}")
        out = bytes(buf).rstrip(b"\x00") if output == "ptx" else bytes(buf)
        return out, _log(prog)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def cache_dir() -> Path:
    return Path(os.environ.get("CAKEC_CACHE_DIR") or Path.home() / ".cache" / "cakec")


def _options(target: str, output: str, extra_options: Sequence[str]) -> list[str]:
    return [arch_option(target, output), *_BASE_OPTIONS, *extra_options]


def cache_entry(source: str, target: str, output: str, extra_options: Sequence[str] = ()
                ) -> Path:
    """Where `compile_cuda` keeps this build: keyed by the source, target, output kind,
    options and NVRTC version, so a toolkit upgrade or a changed flag never returns a stale
    binary."""
    options = _options(target, output, extra_options)
    key = hashlib.sha256("\0".join(
        [source, target, output, *options, "nvrtc-%d.%d" % nvrtc_version()]).encode()).hexdigest()
    return cache_dir() / f"{key}.{output}"


def compile_cuda(source: str, *, target: str, output: Literal["ptx", "cubin"],
                 name: str = "kernel.cu", extra_options: Sequence[str] = ()) -> bytes:
    """Compile one self-contained translation unit; cached on disk by content."""
    path = cache_entry(source, target, output, extra_options)
    try:
        return path.read_bytes()
    except OSError:
        pass
    binary, _ = _compile(source, _options(target, output, extra_options), name, output)
    write_atomic(path, binary)
    return binary


def compile_cubin_verbose(source: str, *, target: str, name: str = "kernel.cu",
                          extra_options: Sequence[str] = ()) -> tuple[bytes, str]:
    """(cubin, compiler log with `-Xptxas -v`: registers, smem, spills); always compiles,
    and leaves the cubin in the cache where `compile_cuda` with the same options finds it."""
    options = [*_options(target, "cubin", extra_options), "-Xptxas", "-v"]
    binary, log = _compile(source, options, name, "cubin")
    write_atomic(cache_entry(source, target, "cubin", extra_options), binary)
    return binary, log


def ptxas_report(source: str, *, target: str, name: str = "kernel.cu",
                 extra_options: Sequence[str] = ()) -> str:
    """The compiler log of a cubin build with `-Xptxas -v`: registers, smem, spills."""
    return compile_cubin_verbose(source, target=target, name=name,
                                 extra_options=extra_options)[1]


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temp file + rename so concurrent compiles never see a partial entry."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError:  # a read-only or full cache only costs a recompile
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
