"""Start-up: what `import cakec` arranges for two of xDSL's modules, done when each is
imported (a meta path finder for those two names only, so `import cakec` itself imports no
xDSL). Where xDSL's layout differs from what a hook expects (another version), the hook
leaves the module as xDSL wrote it.

* `xdsl.irdl.operations`: op classes' assembly formats parsed on first use
  (cakec/lazyformat.py), ops of single arguments built without IRDL's argument
  checks and every op's fields set in one pass (cakec/fastinit.py), and their named
  single operands, results, regions and successors read by one index
  (cakec/fastaccess.py).
* `xdsl.utils.dialect_loader`, imported by `xdsl.dialects` only to put a finder of `.irdl`
  files last on `sys.meta_path` (an import no other finder answers is looked for as
  `NAME.irdl` and built as a dialect): its imports (`importlib.abc`, whose
  `importlib.resources` brings `tempfile`, `shutil`, `bz2`, `lzma`, `random`; xDSL's stub
  generator) cost ~30 M instructions of `cakec verify`'s 756 M (2026-12-04), and Cake never
  imports `.irdl` files. The module's code runs when first needed instead: when that finder
  is first asked for a module, or when anything else of the module is read.
"""

from __future__ import annotations

import sys
from importlib.machinery import ModuleSpec, PathFinder
from types import ModuleType
from typing import Any, Callable

_OPERATIONS = "xdsl.irdl.operations"
_DIALECT_LOADER = "xdsl.utils.dialect_loader"


class _Finder:
    """Finds the hooked modules as the path finder would and hooks their loading; leaves
    `sys.meta_path` once both are found."""

    def __init__(self) -> None:
        self.pending = dict(_HOOKS)

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        hook = self.pending.pop(name, None)
        if hook is None:
            return None
        if not self.pending:
            sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        spec = PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or getattr(loader, "exec_module", None) is None:
            return spec
        hook(spec, loader)
        return spec


def _patch_operations(spec: ModuleSpec, loader: Any) -> None:
    run = loader.exec_module

    def exec_module(module: ModuleType) -> None:
        run(module)
        _patch(module)
    loader.exec_module = exec_module


def _patch(operations: ModuleType) -> None:
    from cakec import fastaccess, fastinit, lazyformat

    lazyformat.patch(operations)
    fastinit.patch(operations)
    fastinit.patch_operation(sys.modules["xdsl.ir.core"])
    fastaccess.patch(operations)


class _DeferredLoader:
    """Loads `xdsl.utils.dialect_loader` as a module whose `IRDLDialectFinder` is a stand-in
    and whose code runs on first need (`_run`)."""

    def __init__(self, loader: Any):
        self.loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec) if hasattr(self.loader, "create_module") \
            else None

    def exec_module(self, module: ModuleType) -> None:
        def missing(name: str) -> Any:
            if name == "__path__":  # what `from M import X` asks first: M is no package
                raise AttributeError(name)
            return getattr(_run(module), name)
        module.IRDLDialectFinder = _IRDLFinder  # type: ignore[attr-defined]
        module.__getattr__ = missing  # type: ignore[attr-defined]


def _run(module: ModuleType) -> ModuleType:
    """Runs the deferred module's own code in it (once) and gives it back."""
    deferred = module.__loader__
    if isinstance(deferred, _DeferredLoader):
        del module.__getattr__  # type: ignore[attr-defined]
        module.__loader__ = deferred.loader
        if module.__spec__ is not None:
            module.__spec__.loader = deferred.loader
        deferred.loader.exec_module(module)
    return module


class _IRDLFinder:
    """Stands for xDSL's IRDLDialectFinder on `sys.meta_path` until an import first asks it
    for a module; then the real finder, made with the same arguments, answers."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.args, self.kwargs = args, kwargs
        self.real: Any = None

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if self.real is None:
            module = _run(sys.modules[_DIALECT_LOADER])
            self.real = module.IRDLDialectFinder(*self.args, **self.kwargs)
        return self.real.find_spec(name, path, target)


def _defer_dialect_loader(spec: ModuleSpec, loader: Any) -> None:
    spec.loader = _DeferredLoader(loader)


_HOOKS: dict[str, Callable[[ModuleSpec, Any], None]] = {
    _OPERATIONS: _patch_operations, _DIALECT_LOADER: _defer_dialect_loader}


def install() -> None:
    """Hook the two modules when they are imported (patch `xdsl.irdl.operations` now if it
    already is)."""
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    finder = _Finder()
    if _OPERATIONS in sys.modules:
        _patch(sys.modules[_OPERATIONS])
    for name in [n for n in finder.pending if n in sys.modules]:
        del finder.pending[name]  # imported already: too late for the hook
    if finder.pending:
        sys.meta_path.insert(0, finder)
