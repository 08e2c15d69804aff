"""The compile half of the Python API: .cake → verified, derived IR → CUDA C++ → NVRTC → a
launchable `Kernel`.

`cakec.compile(...)` is what agents call in a loop: bad schedules fail fast with the same
diagnostics as `cakec verify` (a CakeCompileError carrying them), good ones come back as a
`cakec.runtime.Kernel`. The cubin is cached on disk by NVRTC's cache (source hash, target,
options, toolkit version), so recompiling an unchanged kernel costs only the front end.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import os

from cakec.diagnostics import Diagnostic, render_text
from cakec.errors import CakeCompileError, CakeUsageError, RunUsageError  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    from cakec.driver import Compilation
    from cakec.runtime import Kernel
    from cakec.targets.emit.emitter import CudaUnit
    from cakec.targets.emit.watchdog import Watchdog


@dataclass
class Emitted:
    """A compilation that verified, and its CUDA unit (None when emission failed). Under
    `unchecked`, `rejected` holds the gate diagnostics the unit was emitted despite."""

    comp: "Compilation"
    unit: "CudaUnit | None"
    rejected: list[Diagnostic] = field(default_factory=list)


def load(path: "str | os.PathLike[str] | None" = None, *, source: str | None = None,
         name: str = "<string>"):
    """The SourceFile of a kernel given as a path (`str` or `os.PathLike`) or as `source=`
    text (named `name` in diagnostics); the one place the API reads kernels. A path that
    cannot be read raises CakeReadError; neither or both, or text passed as the path, raise
    CakeUsageError."""
    from cakec.driver import read_source

    if (path is None) == (source is None):
        raise CakeUsageError("give a kernel either as a path or as `source=` text, not "
                             + ("both" if path is not None else "neither"))
    if source is not None:
        if not isinstance(source, str):
            raise CakeUsageError(f"`source=` takes .cake text (str), not {type(source).__name__}")
        return read_source(name, source)
    if not isinstance(path, (str, os.PathLike)):
        raise CakeUsageError(f"a kernel path is a str or os.PathLike, not {type(path).__name__}")
    text_path = os.fspath(path)
    if not isinstance(text_path, str):
        raise CakeUsageError("a kernel path must be text, not bytes")
    if "\n" in text_path:
        raise CakeUsageError("this looks like .cake source text, not a path: pass it as "
                             "`source=`")
    return read_source(text_path)


def emit(source, target: str | None = None, *, watchdog: "Watchdog | None" = None,
         unchecked: bool = False, kernel: str | None = None) -> Emitted:
    """Verify (every gate), then emit CUDA; diagnostics accumulate in `comp.sink`. Input
    that fails verification is never emitted, unless `unchecked`: then a kernel whose
    derivation succeeded is emitted although a gate rejected it (the gates' diagnostics move
    to `rejected`), so a rejected candidate can be run to study how it fails on the GPU.
    `watchdog` bounds every lm.wait (targets/emit/watchdog.py). `kernel` names the kernel to
    emit from a file of several (a translation unit holds one)."""
    from cakec.driver import Compilation, build, run_passes, verify_source

    if not unchecked:
        return emit_verified(verify_source(source, target), watchdog=watchdog, kernel=kernel)
    from cakec.passes import DERIVE, GATES

    comp: Compilation = build(source, target)
    if comp.ok:
        run_passes(comp, ",".join(DERIVE))
    rejected: list[Diagnostic] = []
    if comp.ok:
        before = len(comp.sink.diagnostics)
        run_passes(comp, ",".join(GATES))
        rejected = comp.sink.diagnostics[before:]
        del comp.sink.diagnostics[before:]
    return emit_verified(comp, watchdog=watchdog, rejected=rejected, kernel=kernel)


def emit_verified(comp: "Compilation", *, watchdog: "Watchdog | None" = None,
                  rejected: list[Diagnostic] | None = None, kernel: str | None = None) -> Emitted:
    """Emit CUDA for a compilation `verify_source` returned (nothing when it did not verify);
    `rejected`: the gate diagnostics an unchecked emission set aside; `kernel`: which
    kernel of a file of several."""
    from cakec.driver import _internal

    rejected = rejected or []
    if not comp.ok or comp.module is None or comp.ctx is None:
        return Emitted(comp, None, rejected)
    try:
        from cakec.targets.codegen import emit_kernel, select_kernel

        chosen = select_kernel(comp.module, comp.ctx, kernel)
        # verify-lowering lowered each kernel already (without a watchdog): reuse that unit.
        unit = getattr(comp.ctx, "cake_units", {}).get(chosen) if watchdog is None else None
        if chosen is not None and unit is None:
            unit = emit_kernel(chosen, comp.ctx, comp.sources, watchdog)
    except Exception as e:  # noqa: BLE001 - an emitter bug is a diagnostic, never a traceback
        if comp.ok:  # after a refusal (CAKE-H100) it is that refusal's cascade, not news
            _internal(comp, e)
        unit = None
    return Emitted(comp, unit if comp.ok else None, rejected)


def binary(unit: "CudaUnit", output: str, options: tuple[str, ...] = ()) -> bytes:
    """PTX or cubin for an emitted unit, through NVRTC's disk cache. PTX carries the lowest
    `.version` its instructions need, so older drivers load it too. `options` are extra
    NVRTC flags (`-lineinfo` for the sanitizer)."""
    from cakec.targets.host.ptx_version import lower_ptx_version
    from cakec.targets.host.nvrtc import compile_cuda

    image = compile_cuda(unit.source, target=unit.target, output=output,  # type: ignore[arg-type]
                         name=f"{unit.kernel}.cu", extra_options=options)
    return lower_ptx_version(image, unit.target) if output == "ptx" else image


def compile(path: "str | os.PathLike[str] | None" = None, target: str | None = None, *,
            source: str | None = None, kernel: str | None = None) -> "Kernel":
    """Compile a .cake kernel (a path, or `source=` text) for `target` (default: the
    kernel's own, else sm_100a) into a launchable Kernel. Raises CakeCompileError with the
    diagnostics when it does not verify or cannot be emitted."""
    from cakec.runtime import Kernel

    unit = emit_unit(path, target, source=source, kernel=kernel)
    return Kernel(binary(unit, "cubin"), unit.metadata)


def emit_unit(path: "str | os.PathLike[str] | None" = None, target: str | None = None, *,
              source: str | None = None, kernel: str | None = None) -> "CudaUnit":
    """The CUDA unit (source + launch metadata) of a kernel that verifies; raises
    CakeCompileError with the diagnostics otherwise."""
    result = emit(load(path, source=source), target, kernel=kernel)
    comp = result.comp
    if result.unit is None:
        raise CakeCompileError(comp.sink.diagnostics,
                               render_text(comp.sink.diagnostics, comp.sources))
    return result.unit


# ---- the example contract of `cakec run` (cakec/feedback/runner.py) ------------------------


#: The names of the example contract (docs/run.md): required, then optional
_REQUIRED = ("shapes", "make_inputs", "reference", "baselines", "outputs")
_CONTRACT = _REQUIRED + ("tolerance", "flops", "bytes")


def load_example(path: "str | os.PathLike[str]"):
    """examples/NAME.py next to examples/NAME.cake, as a module: `shapes`, `make_inputs`,
    `reference`, `baselines`, `outputs` (and optionally `tolerance`, `flops`, `bytes`)."""
    import importlib.util
    from pathlib import Path

    sibling = Path(path).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(f"cake_example_{sibling.stem}", sibling)
    if not sibling.is_file() or spec is None or spec.loader is None:
        raise RunUsageError(f"{path} has no sibling {sibling.name} with its inputs, reference "
                            "and baselines")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in _REQUIRED:
        if not hasattr(module, name):
            raise RunUsageError(f"{sibling} does not define `{name}`")
    return module


def alias_example(namespace: dict, path: "str | os.PathLike[str]") -> Any:
    """Make a schedule's sibling module (`namespace`: its globals()) the example contract of
    the example at `path`: another schedule of it takes the same parameters and computes the
    same result, so it shares the inputs, reference and baselines. Returns that example's
    module, for a schedule that overrides part of the contract (its shapes, say)."""
    base = load_example(path)
    namespace.update({name: getattr(base, name) for name in _CONTRACT if hasattr(base, name)})
    return base


def example_generator(device: str, seed: int | None = None):
    """The torch Generator an example's `make_inputs` draws from: seeded when `seed` is given
    (a replayed run), else freshly seeded from the OS (a fresh Generator's default seed is
    fixed, which would make every "fresh" input the same)."""
    import torch

    gen = torch.Generator(device=device)
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)
    return gen


def parse_shape(text: str | None, default: dict[str, int]) -> dict[str, int]:
    """`M=1,N=2` over the example's default shape."""
    shape = dict(default)
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.partition("=")
        if not name.strip().isidentifier() or not value.strip().lstrip("-").isdigit():
            raise RunUsageError(f"--shape expects NAME=INT,... (got {item.strip()!r})")
        shape[name.strip()] = int(value)
    return shape


def time_ms(fns: dict[str, object], rounds: int = 5, budget_ms: float = 40.0) -> dict[str, float]:
    """Median milliseconds per call of each callable, measured with CUDA events on the current
    stream in interleaved rounds, so clock and thermal drift hit every contender alike. Each
    round starts at a different contender (the order rotates by n / rounds), so none is
    always the first after the host's synchronisation."""
    import statistics

    import torch

    def sample(fn, reps: int) -> list[float]:
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(reps)]
        for start, end in events:
            start.record()
            fn()
            end.record()
        torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in events]

    reps: dict[str, int] = {}
    for name, fn in fns.items():
        estimate = statistics.median(sample(fn, 3))  # also the warm-up
        reps[name] = max(3, min(200, int(budget_ms / rounds / max(estimate, 1e-3))))
    times: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for i in range(rounds):
        first = i * len(names) // rounds
        for name in names[first:] + names[:first]:
            times[name] += sample(fns[name], reps[name])
    return {name: statistics.median(ts) for name, ts in times.items()}
