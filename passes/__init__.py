"""Cake's passes, registered lazily by name so the CLI imports only what it runs.

Pipelines (comma-separated names, as `cakec opt --pass-pipeline` takes them):
  derive  = derive-smem,derive-tmem,derive-barriers,derive-tma,derive-descriptors
  verify  = derive + verify-safety,verify-conformance,verify-consistency,verify-lowering
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _lazy(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(f"cakec.passes.{module}"), cls)
    return load


#: name → loader. A pass module that is not written yet simply is not listed.
PASSES: dict[str, Callable[[], type[ModulePass]]] = {}


def register(name: str, module: str, cls: str) -> None:
    PASSES[name] = _lazy(module, cls)


def _available(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(f"cakec.passes.{module}") is not None


for _name, _module, _cls in [
    ("derive-smem", "derive_smem", "DeriveSmem"),
    ("derive-tmem", "derive_tmem", "DeriveTmem"),
    ("derive-barriers", "derive_barriers", "DeriveBarriers"),
    ("derive-tma", "derive_tma", "DeriveTma"),
    ("derive-descriptors", "derive_descriptors", "DeriveDescriptors"),
    ("verify-safety", "verify_safety", "VerifySafety"),
    ("verify-conformance", "verify_conformance", "VerifyConformance"),
    ("verify-consistency", "verify_consistency", "VerifyConsistency"),
    ("verify-lowering", "verify_lowering", "VerifyLowering"),
]:
    if _available(_module):
        register(_name, _module, _cls)

DERIVE = [n for n in ("derive-smem", "derive-tmem", "derive-barriers", "derive-tma",
                      "derive-descriptors") if n in PASSES]
GATES = [n for n in ("verify-safety", "verify-conformance", "verify-consistency",
                     "verify-lowering") if n in PASSES]
ALIASES: dict[str, list[str]] = {"derive": DERIVE, "verify": DERIVE + GATES}


def expand(spec: str) -> str:
    """Expand pipeline aliases (`derive`, `verify`) inside a comma-separated spec."""
    parts = [p.strip() for p in spec.split(",") if p.strip()]
    out: list[str] = []
    for p in parts:
        out.extend(ALIASES.get(p, [p]))
    return ",".join(out)
