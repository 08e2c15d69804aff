"""Start-up cache: the compiled methods that `dataclasses` generates, kept between processes.

Each `@dataclass` (some 340 on the verify path: xDSL's attributes and ops, Cake's syntax
tree) has its `__init__`, `__repr__`, `__eq__`, ... written as source text and compiled with
`exec(text, globals, ns)` when its module is imported: about 100 ms of every fresh `cakec`
process, a quarter of `cakec verify`. Python caches the bytecode of modules (`__pycache__`),
not of text compiled at run time, so this module does it for that text: `install()` gives
the `dataclasses` module an `exec` that looks the text up in a cache file and compiles it
only when it is not there (identical text compiles to identical code; the globals and
namespace are the caller's, as before), and at exit writes what was compiled to the file.
Only the dataclasses of Cake and xDSL go through the cache.

The file (`dataclass-code.<cache tag>.marshal` in Cake's cache directory) maps each text to
its marshalled code object and is read once, entries unmarshalled on first use. Like
`__pycache__`, it is not written when `sys.dont_write_bytecode` is set (`python -B`,
PYTHONDONTWRITEBYTECODE); a missing, unreadable or foreign file only costs the compiles,
and without a cache directory of its own (one that cannot be created) nothing is read.

`install()` also defers the docstring that `dataclasses` writes for such a class without one
(its name and `inspect.signature`: ~30 M instructions of `cakec verify`'s 780 M, 2026-12-04):
the class gets a descriptor that makes the same text when `__doc__` is first read.
"""

from __future__ import annotations

import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from typing import Any, Callable

#: the packages whose dataclasses are cached (dataclasses passes the class's module globals);
#: another library's, or a user's, compile as they always do
_CACHED = ("cakec.", "xdsl.")

#: entries kept in the file (~1 KB each; the verify path uses ~950); past it, only those this
#: process used or compiled are written
MAX_ENTRIES = 4096


def cache_root() -> str:
    """Cake's cache directory: CAKEC_CACHE_DIR, else `$XDG_CACHE_HOME/cakec` or
    `~/.cache/cakec`."""
    return os.environ.get("CAKEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "cakec")


def cache_path(name: str) -> str:
    """The path of cache file `name`, in the cache directory (created) or, where that cannot
    be created, the system's temporary directory."""
    root = cache_root()
    try:
        os.makedirs(root, exist_ok=True)
        return os.path.join(root, name)
    except OSError:
        import tempfile

        return os.path.join(tempfile.gettempdir(), "cakec-" + name)


class _Cache:
    def __init__(self, name: str):
        self.name = name
        self.path = ""
        self.stored: dict[str, bytes] | None = None  # text -> marshalled code, once read
        self.used: set[str] = set()
        self.new: dict[str, bytes] = {}

    def _read(self) -> dict[str, bytes]:
        """The file's entries (read at the first compile: a process that defines no
        dataclass never opens it)."""
        self.stored = {}
        root = cache_root()
        try:
            os.makedirs(root, exist_ok=True)
        except OSError:
            return self.stored  # no cache directory: never code from a shared temporary one
        self.path = os.path.join(root, self.name)
        try:
            with open(self.path, "rb") as f:
                magic, stored = marshal.loads(f.read())
            if magic == MAGIC_NUMBER and isinstance(stored, dict):
                self.stored = stored
        except (OSError, EOFError, ValueError, TypeError):
            pass
        return self.stored

    def exec(self, source: object, globals: dict | None = None,
             locals: dict | None = None) -> None:
        module = (globals or {}).get("__name__") or ""
        if not isinstance(source, str) or not module.startswith(_CACHED):
            exec(source, globals, locals)  # noqa: S102 - what dataclasses asked for
            return
        code = None
        stored = self.stored if self.stored is not None else self._read()
        raw = stored.get(source)
        if raw is not None:
            try:
                code = marshal.loads(raw)
                self.used.add(source)
            except (EOFError, ValueError, TypeError):
                code = None
        if code is None:
            # dont_inherit: this module's `from __future__ import annotations` must not
            # change the generated code (dataclasses compiles without future flags)
            code = compile(source, "<string>", "exec", dont_inherit=True)
            self.new[source] = marshal.dumps(code)
        exec(code, globals, locals)  # noqa: S102

    def save(self) -> None:
        if not self.new or not self.path or sys.dont_write_bytecode:
            return
        keep = self.stored or {}
        if len(keep) + len(self.new) > MAX_ENTRIES:
            keep = {s: keep[s] for s in self.used}
        entries = {**keep, **self.new}
        tmp = f"{self.path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(marshal.dumps((MAGIC_NUMBER, entries)))
            os.replace(tmp, self.path)  # readers see the old file or the new one, whole
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass


class _SignatureDoc:
    """A dataclass's generated docstring, `Name(field: type, ...)` as `dataclasses` writes
    it, made on first read (a class's `__doc__` may be a descriptor)."""

    def __init__(self, cls: type):
        self.cls = cls
        self.text: str | None = None

    def __get__(self, obj: object, owner: type | None = None) -> str:
        if self.text is None:
            import inspect

            try:
                sig = str(inspect.signature(self.cls)).replace(" -> None", "")
            except (TypeError, ValueError):
                sig = ""
            self.text = self.cls.__name__ + sig
        return self.text


def _deferring_docs(process: Callable[..., type]) -> Callable[..., type]:
    """`dataclasses._process_class`, leaving the generated docstrings of Cake's and xDSL's
    classes to `_SignatureDoc`."""

    def process_class(cls: type, *args: Any, **kwargs: Any) -> type:
        if getattr(cls, "__doc__") or not cls.__module__.startswith(_CACHED):
            return process(cls, *args, **kwargs)
        cls.__doc__ = "-"  # a docstring: dataclasses writes none
        out = process(cls, *args, **kwargs)
        out.__doc__ = _SignatureDoc(out)  # type: ignore[assignment]
        return out
    return process_class


_installed: _Cache | None = None


def install() -> None:
    """Routes `dataclasses`' compiles through the cache file (once per process)."""
    global _installed
    tag = sys.implementation.cache_tag
    compiles_text = hasattr(dataclasses, "_create_fn") or hasattr(dataclasses, "_FuncBuilder")
    if _installed is not None or tag is None or not compiles_text:
        return  # already done, or nothing to cache
    import atexit

    cache = _Cache(f"dataclass-code.{tag}.marshal")
    _installed = cache
    # A module-level name shadows the builtin for the code of `dataclasses` only.
    dataclasses.exec = cache.exec  # type: ignore[attr-defined]
    atexit.register(cache.save)
    process = getattr(dataclasses, "_process_class", None)
    if process is not None:
        dataclasses._process_class = _deferring_docs(process)  # type: ignore[attr-defined]
