"""`cakec run` / `cakec.run(...)`: one candidate through every stage of the loop, into one
`RunReport` (cakec/feedback/report.py, docs/run.md).

usage (the sibling .py) → verify → emit (a release and a watchdog build) → compile (NVRTC,
registers / spills / smem) → launch → hang (the watchdog) → numerics on fresh random seeds
with poisoned outputs → timing against the .py's baselines and the speed of light →
sanitize (optional, compute-sanitizer). Every failure stops at its stage with the reason;
nothing raises out of `run` but a KeyboardInterrupt.
"""

from __future__ import annotations

import re
import secrets
import time
from typing import Any, NoReturn

from cakec.diagnostics import Diagnostic
from cakec.feedback.report import RunReport
from cakec.targets.emit.watchdog import DEFAULT_BUDGET_MS, Watchdog

#: How long the host waits for one launch before calling it a hang the watchdog missed.
DEFAULT_TIMEOUT_S = 30.0
_EMIT_CODES = {"CAKE-H100", "CAKE-I001", "CAKE-I002"}


def run(path: str, target: str | None = None, shape: str | None = None, *, seeds: int = 3,
        seed: int | None = None, watchdog: bool = True,
        watchdog_ms: float = DEFAULT_BUDGET_MS, unchecked: bool = False,
        sanitize: str | None = None, record: str | None = None, timing: bool = True,
        timeout_s: float = DEFAULT_TIMEOUT_S, kernel: str | None = None) -> RunReport:
    """Run the candidate at `path` (its sibling .py gives inputs, reference, baselines).
    `seed` fixes the first seed (the others follow it); by default all are fresh. `kernel`
    names the kernel of a file of several."""
    report = RunReport(file=path, unchecked=unchecked)
    state = _State(report, watchdog, watchdog_ms, timeout_s)
    state.sanitize, state.kernel = sanitize, kernel
    try:
        _stages(state, target, shape, seeds, seed, unchecked, timing)
    except _Stop:
        pass
    finally:
        if state.log is not None and report.context_ok:
            state.log.close()  # the pinned host page; a lost context took it already
    if record and report.stage in ("hang", "numerics", "sanitize", "launch") \
            and not report.rejected and report.launch is not None \
            and not report.launch.get("skipped"):
        from cakec.feedback.record import write_bundle

        report.record = write_bundle(record, state)
    return report


class _Stop(Exception):
    """A stage failed; the report says which and why."""


class _State:
    def __init__(self, report: RunReport, watchdog: bool, watchdog_ms: float,
                 timeout_s: float):
        self.report = report
        self.watchdog = watchdog
        self.watchdog_ms = watchdog_ms
        self.timeout_s = timeout_s
        self.source = None
        self.seeds: list[int] = []
        self.units: dict[str, Any] = {}
        self.arch: str | None = None  # what NVRTC builds for (launch_arch)
        self.log: Any = None          # the watchdog's host-mapped log, once armed
        self.module: Any = None       # the derived IR (the MMA dtypes of the roofline)
        self.sanitize: str | None = None  # `--sanitize TOOL`
        self.kernel: str | None = None    # `--kernel NAME`: which kernel of the file

    def metadata(self, build: str) -> dict:
        """The build's launch metadata, naming the arch its cubin was built for."""
        return self.units[build].metadata | {"target": self.arch}

    def stop(self, stage: str, reason: str, diags: list[Diagnostic] = ()) -> NoReturn:
        self.report.stage = stage
        self.report.reason = reason
        self.report.diagnostics += [d.to_json() for d in diags]
        raise _Stop


def _stages(st: _State, target: str | None, shape_text: str | None, n_seeds: int,
            seed: int | None, unchecked: bool, timing: bool) -> None:
    from cakec import api

    rep = st.report
    try:
        st.source = api.load(rep.file)
    except (OSError, UnicodeDecodeError) as e:
        st.stop("usage", f"cannot read {rep.file}: {getattr(e, 'strerror', None) or e}")
    try:
        example = api.load_example(rep.file)
        shape = api.parse_shape(shape_text, dict(example.shapes[0]))
    except api.RunUsageError as e:
        st.stop("usage", str(e))
    except Exception as e:  # noqa: BLE001 - the example module is user code
        st.stop("usage", f"the example module failed to load: {type(e).__name__}: {e}")
    rep.shape = shape

    # verify + emit: the release build, then the watchdog build from the same derived IR
    plain = api.emit(st.source, target, unchecked=unchecked, kernel=st.kernel)
    rep.rejected = [d.to_json() for d in plain.rejected]
    diags = plain.comp.sink.diagnostics
    if plain.unit is None:
        errors = [d for d in diags if d.severity == "error"]
        stage = "emit" if errors and all(d.code in _EMIT_CODES for d in errors) else "verify"
        st.stop(stage, f"{len(errors)} error(s) from `cakec {stage}`", diags)
    rep.diagnostics += [d.to_json() for d in diags]
    unit = plain.unit
    rep.kernel, rep.target = unit.kernel, unit.target
    st.module = plain.comp.module
    st.units["release"] = unit
    if st.watchdog:
        from cakec.targets.codegen import emit_cuda

        wd_unit = emit_cuda(plain.comp.module, plain.comp.ctx, plain.comp.sources,
                            Watchdog(st.watchdog_ms), unit.kernel)
        if wd_unit is None:
            st.stop("emit", "the watchdog build could not be emitted",
                    plain.comp.sink.diagnostics[len(diags):])
        st.units["watchdog"] = wd_unit
        rep.watchdog = {"enabled": True, "budget_ms": st.watchdog_ms,
                        "sites": len(wd_unit.watchdog["sites"])}
    else:
        rep.watchdog = {"enabled": False, "budget_ms": None, "sites": 0}

    st.arch, skipped = launch_arch(unit.target)
    cubins = _compile(st)

    # launch: everything from here needs a GPU that runs the build
    if skipped:
        rep.launch = {"skipped": skipped}
        st.stop("launch", f"GPU stages skipped: {skipped}")
    from cakec.runtime import Kernel

    kernels = {name: Kernel(cubin, st.metadata(name)) for name, cubin in cubins.items()}
    rep.device = _device(kernels["release"])
    res = rep.compile["resources"]
    if res["registers"] is None:
        # NVRTC printed no ptxas report (seen on the H200 for a program another process had
        # compiled before, in ~0.1 s): what the driver loaded says it, spills excepted.
        try:
            attrs = kernels["release"].function_attributes()
        except Exception as e:  # noqa: BLE001 - a driver refusal is a launch failure
            st.stop("launch", f"cannot load {rep.kernel}: {e}")
        res |= {"registers": attrs["num_regs"], "stack_bytes": attrs["local_size_bytes"],
                "static_smem": attrs["shared_size_bytes"], "from": "driver"}
    run_kernel = kernels["watchdog" if st.watchdog else "release"]
    log = None
    if st.watchdog:
        from cakec.feedback.watchdog import WatchdogLog

        try:
            log = st.log = WatchdogLog(run_kernel)
        except Exception as e:  # noqa: BLE001 - a driver refusal is a launch failure
            st.stop("launch", f"cannot arm the watchdog: {e}")
    names = [p.name for p in run_kernel.meta.params]
    unknown = [o for o in example.outputs if o not in names]
    if unknown:
        st.stop("usage", f"`outputs` names {unknown}, which are not parameters of "
                f"{rep.kernel} ({', '.join(names)})")

    first = seed if seed is not None else secrets.randbits(31)
    st.seeds = [first + i for i in range(n_seeds)]
    tolerance = float(getattr(example, "tolerance", 1e-2))
    rep.numerics = {"tolerance": tolerance, "seeds": [], "correct": False}
    rep.launch = {"error": None, "launches": 0}
    inputs: list[Any] = []
    for s in st.seeds:
        inputs = _one_seed(st, example, shape, s, run_kernel, log, names, tolerance)
    rep.numerics["correct"] = all(r["correct"] for r in rep.numerics["seeds"])
    # The sanitizer runs even after wrong numbers (and after a fault, `_launch`): its report
    # is what explains them.
    if st.sanitize:
        _sanitize(st)
    if not rep.numerics["correct"]:
        bad = next(r for r in rep.numerics["seeds"] if not r["correct"])
        st.stop("numerics", f"seed {bad['seed']}: " + (
            f"{bad['unwritten']} of {bad['elements']} output elements never written"
            if bad["unwritten"] else f"rel_err {bad['rel_err']} > tolerance {tolerance:g}"))
    errors = [d for d in (rep.sanitizer or {}).get("reports", []) if d["severity"] == "error"]
    if errors:  # warnings (reports the tool cannot confirm here) are reported, not fatal
        st.stop("sanitize", f"{st.sanitize}: {len(errors)} report(s)")
    if timing:
        _timing(st, example, shape, inputs, kernels)
    rep.stage = "done"


def launch_arch(target: str) -> tuple[str, str | None]:
    """(the arch the cubins are built for, why the GPU stages cannot run here or None), for
    the GPU torch sees (`arch_for`)."""
    try:
        import torch
    except ImportError:
        return target, "torch is not installed"
    if not torch.cuda.is_available():
        return target, "no CUDA GPU visible"
    return arch_for(target, torch.cuda.get_device_capability())


def arch_for(target: str, cc: tuple[int, int]) -> tuple[str, str | None]:
    """A target whose SASS a GPU of compute capability `cc` runs is built as is; a portable
    one (sm_80: no `a`/`f` suffix) that the GPU is newer than is built for the GPU's own arch
    from the same source (what the driver would JIT from its PTX, but as a cubin that
    nvdisasm, and so the sanitizer's PCs, can be mapped through); anything else cannot run."""
    from cakec.runtime.launch import _target_runs_on

    if _target_runs_on(target, *cc):
        return target, None
    if _target_runs_on(target, *cc, ptx=True):
        return f"sm_{cc[0]}{cc[1]}", None
    return target, f"the kernel is for {target} and this GPU is sm_{cc[0]}{cc[1]}"


def _compile(st: _State) -> dict[str, bytes]:
    """NVRTC for `st.arch`: the release cubin with ptxas's resource report, the watchdog
    cubin."""
    from cakec.targets.host.nvrtc import NvrtcError, compile_cubin_verbose, compile_cuda

    out: dict[str, bytes] = {}
    info: dict[str, Any] = {}
    for name, unit in st.units.items():
        t0 = time.perf_counter()
        try:
            if name == "release":
                cubin, log = compile_cubin_verbose(unit.source, target=st.arch,
                                                   name=f"{unit.kernel}.cu")
                info["resources"] = resources(log) | {"from": "ptxas"}
            else:
                cubin = compile_cuda(unit.source, target=st.arch, output="cubin",
                                     name=f"{unit.kernel}.cu")
        except NvrtcError as e:
            st.report.compile = info | {"arch": st.arch, "error": str(e)}
            st.stop("compile", f"NVRTC rejected the generated CUDA ({name} build) "
                    "[CAKE-I003]: this is a bug in cakec")
        info[f"{name}_ms"] = (time.perf_counter() - t0) * 1e3
        out[name] = cubin
    info["resources"]["dynamic_smem"] = st.units["release"].metadata["dynamic_smem"]
    st.report.compile = info | {"arch": st.arch, "error": None}
    return out


_PTXAS = {
    "registers": re.compile(r"Used (\d+) registers"),
    "stack_bytes": re.compile(r"(\d+) bytes stack frame"),
    "spill_store_bytes": re.compile(r"(\d+) bytes spill stores"),
    "spill_load_bytes": re.compile(r"(\d+) bytes spill loads"),
    "static_smem": re.compile(r"(\d+) bytes smem"),
}


def resources(log: str) -> dict[str, Any]:
    """Registers per thread, stack, spills and static smem from ptxas's -v report, and the
    performance notes it printed (C7xxx: serialised wgmma, ignored setmaxnreg, ...)."""
    out: dict[str, Any] = {}
    used = _PTXAS["registers"].search(log)
    for key, pattern in _PTXAS.items():
        m = pattern.search(log)
        # ptxas leaves a zero count out of its report ("Used 118 registers, used 1 barriers"
        # for a kernel without static smem), so once it reported, a missing count is 0.
        out[key] = int(m.group(1)) if m else (0 if used and key != "registers" else None)
    out["ptxas_notes"] = sorted({m.group(0).strip() for m in
                                 re.finditer(r"\((C7\d{3})\)[^\n]*", log)})
    return out


def _device(kernel: Any) -> dict[str, Any]:
    import torch
    from cuda.bindings import driver as drv

    from cakec.runtime.launch import _check

    _check(drv.cuInit(0), "cuInit")
    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    handle = _check(drv.cuDeviceGet(dev), "cuDeviceGet")
    clock = _check(drv.cuDeviceGetAttribute(
        drv.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, handle), "clock rate")
    return {"name": props.name, "cc": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, "clock_khz": int(clock)}


def _one_seed(st: _State, example: Any, shape: dict, seed: int, kernel: Any, log: Any,
              names: list[str], tolerance: float) -> list[Any]:
    import torch

    from cakec.feedback.numerics import compare, poison

    rep = st.report
    torch.manual_seed(seed)
    try:
        inputs = list(example.make_inputs(shape, "cuda"))
    except Exception as e:  # noqa: BLE001 - user code
        st.stop("usage", f"make_inputs failed: {type(e).__name__}: {e}")
    outs = [inputs[names.index(o)] for o in example.outputs]
    poison(outs)
    torch.cuda.synchronize()
    if log is not None and log.words[0]:
        log.reset()
    _launch(st, kernel, inputs, log)
    try:
        refs = example.reference(inputs)
    except Exception as e:  # noqa: BLE001 - user code
        st.stop("usage", f"reference failed: {type(e).__name__}: {e}")
    refs = list(refs) if isinstance(refs, (tuple, list)) else [refs]
    per_output = [compare(o, r, tolerance) | {"output": name}
                  for name, o, r in zip(example.outputs, outs, refs)]
    worst = max(per_output, key=lambda r: (not r["correct"], r["max_abs_err"] or 0.0))
    rep.numerics["seeds"].append({"seed": seed, **worst,
                                  "correct": all(r["correct"] for r in per_output),
                                  "unwritten": sum(r["unwritten"] for r in per_output),
                                  "elements": sum(r["elements"] for r in per_output)})
    return inputs


def _launch(st: _State, kernel: Any, inputs: list[Any], log: Any) -> None:
    """One launch; waits at most timeout_s; a watchdog record makes it a hang."""
    import torch

    from cakec.runtime import CakeArgumentError, CakeLaunchError

    rep = st.report
    t0 = time.perf_counter()
    try:
        kernel(*inputs)
    except (CakeArgumentError, CakeLaunchError) as e:
        rep.launch["error"] = str(e)
        st.stop("launch", str(e))
    rep.launch["launches"] += 1
    done = torch.cuda.Event()
    done.record()
    while not _completed(st, done):
        if time.perf_counter() - t0 > st.timeout_s:
            from cakec.feedback.watchdog import not_stopped

            rep.context_ok = False
            rep.hang = {"seconds": time.perf_counter() - t0, "stopped_by_watchdog": False,
                        "records": [], "gpu_usable_after": False}
            st.stop("hang", f"no completion within {st.timeout_s:g} s",
                    [not_stopped(st.timeout_s, rep.kernel or "the kernel", st.watchdog)])
        time.sleep(0.001)
    seconds = time.perf_counter() - t0
    try:
        torch.cuda.synchronize()
    except RuntimeError as e:
        _faulted(st, e)
    if log is not None and log.words[0]:
        from cakec.feedback.watchdog import diagnostics

        records, dropped = log.records()
        table = st.units["watchdog"].watchdog
        diags = diagnostics(records, table, dropped)
        rep.hang = {"seconds": seconds, "stopped_by_watchdog": True,
                    "records": [r.to_json() | {"role": table["sites"][r.site]["role"],
                                               "barrier": table["sites"][r.site]["barrier"],
                                               "line": table["sites"][r.site]["line"]}
                                for r in records[:64]],
                    "record_count": len(records), "dropped": dropped,
                    "gpu_usable_after": _gpu_usable()}
        rep.context_ok = rep.hang["gpu_usable_after"]
        first = diags[0].message if diags else "watchdog fired"
        st.stop("hang", first, diags)


def _completed(st: _State, done: Any) -> bool:
    """Polls the launch's event; a fault can surface here first (torch raises from query)."""
    try:
        return bool(done.query())
    except RuntimeError as e:
        _faulted(st, e)


def _faulted(st: _State, e: RuntimeError) -> NoReturn:
    """An illegal address, a trap: the context is gone; stops the run at the launch stage."""
    st.report.context_ok = False
    st.report.launch["error"] = " ".join(str(e).split())
    if st.sanitize:  # in a process of its own: this one's lost context does not matter
        _sanitize(st)
    st.stop("launch", f"the kernel faulted: {st.report.launch['error']}")


def _sanitize(st: _State) -> None:
    from cakec.feedback.sanitize import run_sanitizer

    st.report.sanitizer = run_sanitizer(st, st.sanitize)


def _gpu_usable() -> bool:
    """After a watchdog stop: does this process's context still run work correctly?"""
    import torch

    try:
        x = torch.arange(1 << 20, device="cuda", dtype=torch.float64)
        return float(x.sum()) == float((1 << 20) * ((1 << 20) - 1) // 2)
    except RuntimeError:
        return False


def _timing(st: _State, example: Any, shape: dict, inputs: list[Any],
            kernels: dict[str, Any]) -> None:
    from cakec import api
    from cakec.feedback import roofline

    rep = st.report
    contenders = {"cake": lambda: kernels["release"](*inputs)}
    if "watchdog" in kernels:
        contenders["cake+watchdog"] = lambda: kernels["watchdog"](*inputs)
    contenders |= {name: (lambda f=f: f(inputs)) for name, f in example.baselines.items()}
    try:
        ms = api.time_ms(contenders)
    except Exception as e:  # noqa: BLE001 - a baseline is user code
        st.stop("timing", f"timing failed: {type(e).__name__}: {e}")
    rep.timing = {
        "ms": ms,
        "speedup": {k: v / ms["cake"] for k, v in ms.items() if k not in ("cake",
                                                                          "cake+watchdog")},
        "watchdog_overhead": ms["cake+watchdog"] / ms["cake"] - 1
        if "cake+watchdog" in ms else None,
    }
    flops = float(example.flops(shape)) if hasattr(example, "flops") else None
    if hasattr(example, "bytes"):
        nbytes, source = int(example.bytes(shape)), "example"
    else:
        nbytes, source = roofline.tensor_bytes(inputs), "tensor arguments, once each"
    dev = rep.device or {}
    dtypes = roofline.mma_dtypes(st.module)
    peak = roofline.tensor_peak_tflops(st.arch, dev.get("sm_count", 0),
                                       dev.get("clock_khz", 0), dtypes)
    rep.speed_of_light = roofline.speed_of_light(flops, nbytes, source, ms["cake"], peak,
                                                 roofline.copy_bandwidth_gbps()) | {
        "mma_dtypes": sorted(dtypes)}
