"""The compile half of the Python API: .cake → verified, derived IR → CUDA C++ → NVRTC → a
launchable `Kernel`.

`cakec.compile(...)` is what agents call in a loop: bad schedules fail fast with the same
diagnostics as `cakec verify` (a CakeCompileError carrying them), good ones come back as a
`cakec.runtime.Kernel`. The cubin is cached on disk by NVRTC's cache (source hash, target,
options, toolkit version), so recompiling an unchanged kernel costs only the front end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cakec.diagnostics import Diagnostic, render_text

if TYPE_CHECKING:
    from cakec.driver import Compilation
    from cakec.runtime import Kernel
    from cakec.targets.emit.emitter import CudaUnit


class CakeCompileError(Exception):
    """The kernel did not verify or could not be emitted; `diagnostics` says why."""

    def __init__(self, diagnostics: list[Diagnostic], text: str):
        super().__init__(text.rstrip() or "compilation failed")
        self.diagnostics = diagnostics


@dataclass
class Emitted:
    """A compilation that verified, and its CUDA unit (None when emission failed)."""

    comp: "Compilation"
    unit: "CudaUnit | None"


def load(source_or_path: str):
    """A SourceFile from a path or from .cake text (text has a newline or a decorator)."""
    from cakec.driver import read_source

    if "\n" in source_or_path or source_or_path.lstrip().startswith("@"):
        return read_source("<string>", source_or_path)
    return read_source(source_or_path)


def emit(source, target: str | None = None) -> Emitted:
    """Verify (every gate), then emit CUDA; diagnostics accumulate in `comp.sink`. Input
    that fails verification is never emitted."""
    from cakec.driver import verify_source

    return emit_verified(verify_source(source, target))


def emit_verified(comp: "Compilation") -> Emitted:
    """Emit CUDA for a compilation `verify_source` returned (nothing when it did not verify)."""
    from cakec.driver import _internal

    if not comp.ok or comp.module is None or comp.ctx is None:
        return Emitted(comp, None)
    try:
        from cakec.targets.codegen import emit_cuda

        unit = emit_cuda(comp.module, comp.ctx, comp.sources)
    except Exception as e:  # noqa: BLE001 - an emitter bug is a diagnostic, never a traceback
        _internal(comp, e)
        unit = None
    return Emitted(comp, unit if comp.ok else None)


def binary(unit: "CudaUnit", output: str) -> bytes:
    """PTX or cubin for an emitted unit, through NVRTC's disk cache. PTX carries the lowest
    `.version` its instructions need, so older drivers load it too."""
    from cakec.targets.host.ptx_version import lower_ptx_version
    from cakec.targets.host.nvrtc import compile_cuda

    image = compile_cuda(unit.source, target=unit.target, output=output,  # type: ignore[arg-type]
                         name=f"{unit.kernel}.cu")
    return lower_ptx_version(image, unit.target) if output == "ptx" else image


def compile(source_or_path: str, target: str | None = None) -> "Kernel":
    """Compile a .cake kernel (a path or source text) for `target` (default: the kernel's
    own, else sm_100a) into a launchable Kernel. Raises CakeCompileError with the
    diagnostics when it does not verify or cannot be emitted."""
    from cakec.runtime import Kernel

    unit = emit_unit(source_or_path, target)
    return Kernel(binary(unit, "cubin"), unit.metadata)


def emit_unit(source_or_path: str, target: str | None = None) -> "CudaUnit":
    """The CUDA unit (source + launch metadata) of a kernel that verifies; raises
    CakeCompileError with the diagnostics otherwise."""
    result = emit(load(source_or_path), target)
    comp = result.comp
    if result.unit is None:
        raise CakeCompileError(comp.sink.diagnostics,
                               render_text(comp.sink.diagnostics, comp.sources))
    return result.unit


# ---- cakec run: one example, checked and timed ---------------------------------------------


class RunUsageError(Exception):
    """The example's sibling .py is missing or malformed, or --shape is not NAME=INT,..."""


def load_example(path: str):
    """examples/NAME.py next to examples/NAME.cake, as a module: `shapes`, `make_inputs`,
    `reference`, `baselines`, `outputs` (and optionally `tolerance`, `flops`)."""
    import importlib.util
    from pathlib import Path

    sibling = Path(path).with_suffix(".py")
    spec = importlib.util.spec_from_file_location(f"cake_example_{sibling.stem}", sibling)
    if not sibling.is_file() or spec is None or spec.loader is None:
        raise RunUsageError(f"{path} has no sibling {sibling.name} with its inputs, reference "
                            "and baselines")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name in ("shapes", "make_inputs", "reference", "baselines", "outputs"):
        if not hasattr(module, name):
            raise RunUsageError(f"{sibling} does not define `{name}`")
    return module


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
    stream in interleaved rounds, so clock and thermal drift hit every contender alike."""
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
    for _ in range(rounds):
        for name, fn in fns.items():
            times[name] += sample(fn, reps[name])
    return {name: statistics.median(ts) for name, ts in times.items()}


def run_example(path: str, target: str | None = None, shape_text: str | None = None) -> dict:
    """What `cakec run` does: compile, launch once on fresh random inputs with every output
    poisoned (NaN), compare with the reference (relative error norm), check every output
    element was written, then time the kernel and each baseline side by side."""
    try:
        import torch
    except ImportError:
        raise RunUsageError("`cakec run` needs torch (pip install torch)") from None
    if not torch.cuda.is_available():
        raise RunUsageError("`cakec run` needs a CUDA GPU; none is visible")
    example = load_example(path)
    kernel = compile(path, target)
    shape = parse_shape(shape_text, dict(example.shapes[0]))
    names = [p.name for p in kernel.meta.params]
    unknown = [o for o in example.outputs if o not in names]
    if unknown:
        raise RunUsageError(f"`outputs` names {unknown}, which are not parameters of "
                            f"{kernel.meta.kernel} ({', '.join(names)})")
    inputs = list(example.make_inputs(shape, "cuda"))
    outs = [inputs[names.index(o)] for o in example.outputs]
    for out in outs:
        out.fill_(float("nan"))
    kernel(*inputs)
    torch.cuda.synchronize()
    refs = example.reference(inputs)
    refs = list(refs) if isinstance(refs, (tuple, list)) else [refs]
    unwritten = sum(int(torch.isnan(o).sum()) for o in outs)
    total = sum(o.numel() for o in outs)
    err = max(_rel_err(o, r) for o, r in zip(outs, refs)) if not unwritten else float("nan")
    tolerance = float(getattr(example, "tolerance", 1e-2))
    contenders = {"cake": lambda: kernel(*inputs)}
    contenders |= {name: (lambda f=f: f(inputs)) for name, f in example.baselines.items()}
    ms = time_ms(contenders)
    flops = example.flops(shape) if hasattr(example, "flops") else None
    return {
        "kernel": kernel.meta.kernel, "target": kernel.meta.target, "shape": shape,
        "correct": unwritten == 0 and err <= tolerance, "rel_err": err,
        "tolerance": tolerance, "written": total - unwritten, "outputs": total,
        "ms": ms, "tflops": {k: flops / v / 1e9 for k, v in ms.items()} if flops else {},
        "speedup": {k: v / ms["cake"] for k, v in ms.items() if k != "cake"},
    }


def _rel_err(out, ref) -> float:
    diff = (out.double() - ref.double()).norm()
    scale = ref.double().norm()
    return float(diff / scale) if float(scale) else float(diff)


def facts_line(f: dict) -> str:
    """One line: what ran, whether it is right, and how fast against each baseline."""
    shape = " ".join(f"{k}={v}" for k, v in f["shape"].items())
    verdict = "correct" if f["correct"] else "WRONG"
    parts = [f"{f['kernel']} {f['target']} {shape}",
             f"{verdict} rel_err={f['rel_err']:.2e} (tol {f['tolerance']:.0e}) "
             f"written={f['written']}/{f['outputs']}"]
    for name, ms in f["ms"].items():
        rate = f" {f['tflops'][name]:.1f} TFLOP/s" if f["tflops"] else ""
        ratio = f" (cake {f['speedup'][name]:.2f}x)" if name in f["speedup"] else ""
        parts.append(f"{name} {ms:.3f} ms{rate}{ratio}")
    return " | ".join(parts)
