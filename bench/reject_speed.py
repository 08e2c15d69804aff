"""How fast is a bad candidate rejected? For each broken kernel of bench/broken/ (one bug class
each): (a) static rejection by the verifier in-process, (b) the GPU path: NVRTC compile of the
`--unchecked` watchdog build + launch until the watchdog stops it or the numbers are checked,
(c) the same build without the watchdog, in a process of its own, killed at the cap.

    python3 bench/reject_speed.py [--cap 60] [--shape M=512,N=512,K=1024] [--json OUT]

Prints the table and the ratio (b)/(a); the hang diagnostics of (b) are printed as the
runtime reports them. (a) and (b) run kernel after kernel in one process (a watchdog stop
leaves the context usable); a kernel that faults loses the context, and the rest continue
in a fresh process. (c): the plain builds compile in parallel worker processes (each
compile timed on its own core), then the kernels that finished in (b) launch together, then
the ones that hung in (b) together (each is just waited out to the cap); a row's (c) is its
compile plus its launch-to-exit time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BROKEN = ROOT / "bench" / "broken"
#: Shapes per kernel where the default one hides the bug: one K step for the tail deadlock.
#: tail_deadlock and the two wrong-stage kernels deadlock at one K step (the verifier's witness
#: launch, K = 0 → 1 step); at 16 steps their rings line up again (a race, not a hang).
ONE_STEP = "M=512,N=512,K=64"
SHAPES = {"tail_deadlock": ONE_STEP, "wrong_stage": ONE_STEP, "wrong_producer_stage": ONE_STEP,
          "kmeans_early_release": "B=1,N=4096,K=1024,D=128", "sm80_early_release":
          "M=256,N=256,K=256", "sm80_missing_fence": "M=256,K=256"}
#: Seconds the host waits for a watchdog build before giving up on the whole run.
DEADLINE_S = 20.0


def static_ms(path: Path) -> tuple[float, list[str]]:
    from cakec import api
    from cakec.driver import verify_source

    times, codes = [], []
    for _ in range(3):
        t0 = time.perf_counter()
        comp = verify_source(api.load(str(path)))
        times.append((time.perf_counter() - t0) * 1e3)
        codes = sorted({d.code for d in comp.sink.diagnostics if d.severity == "error"})
    return statistics.median(times), codes


def gpu_path(path: Path, shape_text: str, seed: int) -> dict:
    """NVRTC (uncached) + launch of the watchdog build, until the watchdog or the check."""
    import torch

    from cakec import api
    from cakec.diagnostics import render_text
    from cakec.feedback import watchdog as wd
    from cakec.feedback.numerics import compare, poison
    from cakec.runtime import Kernel
    from cakec.feedback.runner import launch_arch
    from cakec.targets.emit.watchdog import Watchdog
    from cakec.targets.host.nvrtc import _compile, arch_option

    t0 = time.perf_counter()
    result = api.emit(api.load(str(path)), unchecked=True, watchdog=Watchdog())
    unit = result.unit
    arch, _ = launch_arch(unit.target)
    cubin, _ = _compile(unit.source, [arch_option(arch, "cubin"), "-std=c++17"],
                        f"{unit.kernel}.cu", "cubin")
    t_compile = time.perf_counter()
    kernel = Kernel(cubin, unit.metadata | {"target": arch})
    log = wd.WatchdogLog(kernel)
    example = api.load_example(str(path))
    shape = api.parse_shape(shape_text, dict(example.shapes[0]))
    torch.manual_seed(seed)
    inputs = list(example.make_inputs(shape, "cuda"))
    names = [p.name for p in kernel.meta.params]
    outs = [inputs[names.index(o)] for o in example.outputs]
    poison(outs)
    torch.cuda.synchronize()
    t_launch = time.perf_counter()
    kernel(*inputs)
    done = torch.cuda.Event()
    done.record()
    try:
        while not done.query():  # the watchdog should stop any hang within its budget
            if time.perf_counter() - t_launch > DEADLINE_S:
                return {"compile_ms": (t_compile - t0) * 1e3, "launch_ms": DEADLINE_S * 1e3,
                        "gpu_ms": (time.perf_counter() - t0) * 1e3, "text": "",
                        "outcome": "hang NOT stopped", "gpu_usable_after": False}
            time.sleep(0.001)
        torch.cuda.synchronize()
    except RuntimeError as e:  # a fault (e.g. the CTA exited under in-flight TMA): context lost
        t_done = time.perf_counter()
        return {"compile_ms": (t_compile - t0) * 1e3, "launch_ms": (t_done - t_launch) * 1e3,
                "gpu_ms": (t_done - t0) * 1e3, "text": "",
                "outcome": "fault: " + str(e).splitlines()[0], "gpu_usable_after": False}
    t_done = time.perf_counter()
    out = {"compile_ms": (t_compile - t0) * 1e3, "launch_ms": (t_done - t_launch) * 1e3}
    if log.fired:
        records, dropped = log.records()
        diags = wd.diagnostics(records, unit.watchdog, dropped)
        out |= {"outcome": "hang (watchdog)", "text": render_text(diags, result.comp.sources)}
    else:
        refs = example.reference(inputs)
        refs = list(refs) if isinstance(refs, (tuple, list)) else [refs]
        rs = [compare(o, r, float(getattr(example, "tolerance", 1e-2)))
              for o, r in zip(outs, refs)]
        ok = all(r["correct"] for r in rs)
        out |= {"outcome": "correct (bug not seen)" if ok else
                f"wrong (rel_err {rs[0]['rel_err']}, unwritten {rs[0]['unwritten']})",
                "text": ""}
        t_done = time.perf_counter()
    out["gpu_ms"] = (t_done - t0) * 1e3
    x = torch.arange(1024, device="cuda", dtype=torch.float64)
    out["gpu_usable_after"] = float(x.sum()) == 1023 * 512
    log.close()
    return out


def plain_build(path: Path, folder: Path, shape_text: str, seed: int,
                cc: tuple[int, int]) -> tuple[Path, float]:
    """The `--unchecked` build without the watchdog, compiled (uncached, timed: its NVRTC is
    part of (c) as the watchdog build's is of (b)) into a launch_once folder. Runs in a worker
    process (no CUDA here: NVRTC only)."""
    from cakec import api
    from cakec.feedback import launch_once
    from cakec.feedback.runner import arch_for
    from cakec.targets.host.nvrtc import _compile, arch_option

    t0 = time.perf_counter()
    unit = api.emit(api.load(str(path)), unchecked=True).unit
    arch, _ = arch_for(unit.target, cc)
    cubin, _ = _compile(unit.source, [arch_option(arch, "cubin"), "-std=c++17"],
                        f"{unit.kernel}.cu", "cubin")
    compile_ms = (time.perf_counter() - t0) * 1e3
    example = api.load_example(str(path))
    shape = api.parse_shape(shape_text, dict(example.shapes[0]))
    return launch_once.write(folder, cubin, unit.metadata | {"target": arch}, str(path), shape,
                             seed, watchdog=False), compile_ms


def no_watchdog(folders: dict[str, Path], cap: float) -> dict[str, dict]:
    """Launch-to-exit time of each plain build, each in a process of its own (timed from the
    child's `ready`, so the process's own start-up is not counted), or the kill at `cap`."""
    cmd = [sys.executable, "-m", "cakec.feedback.launch_once"]
    procs = {n: subprocess.Popen([*cmd, str(f)], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True) for n, f in folders.items()}
    ready = {}
    for n, p in procs.items():
        while (line := p.stdout.readline()) and "ready" not in line:
            pass
        ready[n] = time.perf_counter()
    out: dict[str, dict] = {}
    for n, p in procs.items():
        try:
            p.wait(timeout=max(cap - (time.perf_counter() - ready[n]), 0.1))
            out[n] = {"ms": (time.perf_counter() - ready[n]) * 1e3,
                      "outcome": _EXITS.get(p.returncode, f"exit {p.returncode}")}
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            out[n] = {"ms": cap * 1e3, "outcome": f"killed at {cap:g} s (hung)"}
    return out


#: launch_once's exit statuses.
_EXITS = {0: "finished", 5: "fault", 6: "watchdog"}


def child(names: list[str], shape_default: str, seed: int) -> int:
    """(a) and (b) for `names` in this process, one JSON line each, until a kernel loses the
    context (a fault or an unstopped hang): the parent starts a fresh process for the rest.
    Consecutive kernels after a watchdog stop run here, in the same process and context."""
    import torch

    x = torch.ones(8, 8, device="cuda")
    (x @ x).sum().item()  # the context and cuBLAS, so no row's (b) pays for their start-up
    from cakec import api
    from cakec.driver import verify_source

    verify_source(api.load(str(ROOT / "examples" / "gemm_bf16.cake")))  # imports, warm-up
    for name in names:
        path = BROKEN / f"{name}.cake"
        shape = SHAPES.get(name, shape_default)
        s_ms, codes = static_ms(path)
        g = gpu_path(path, shape, seed)
        print(json.dumps({"name": name, "static_ms": s_ms, "codes": codes, "shape": shape,
                          "cc": torch.cuda.get_device_capability(), **g}), flush=True)
        if not g["gpu_usable_after"]:
            os._exit(0)  # the context is gone: no teardown
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cap", type=float, default=60.0)
    ap.add_argument("--shape", default="M=512,N=512,K=1024")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None)
    ap.add_argument("--only", default=None, help="comma-separated kernel names")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child.split(","), args.shape, args.seed)
    names = [k.stem for k in sorted(BROKEN.glob("*.cake"))]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows: dict[str, dict] = {}
    while len(rows) < len(names):
        rest = [n for n in names if n not in rows]
        proc = subprocess.run([sys.executable, __file__, "--child", ",".join(rest),
                               "--shape", args.shape, "--seed", str(args.seed)],
                              capture_output=True, text=True)
        got = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        if not got:
            print(proc.stderr[-3000:], file=sys.stderr)
            return 1
        for r in got:
            rows[r.pop("name")] = r
    for n, r in rows.items():
        print(f"--- {n}: static {r['static_ms']:.1f} ms {r['codes'] or 'ACCEPTED'}; GPU "
              f"{r['gpu_ms']:.0f} ms (compile {r['compile_ms']:.0f}, launch {r['launch_ms']:.0f})"
              f": {r['outcome']}; GPU usable after: {r['gpu_usable_after']}", flush=True)
        if r["text"]:
            print(r["text"], end="", flush=True)
    cc = tuple(next(iter(rows.values()))["cc"])  # the children's GPU; no CUDA in this process
    with tempfile.TemporaryDirectory() as tmp, ProcessPoolExecutor(8) as pool:
        jobs = {n: pool.submit(plain_build, BROKEN / f"{n}.cake", Path(tmp) / n, r["shape"],
                               args.seed, cc) for n, r in rows.items()}
        builds = {n: j.result() for n, j in jobs.items()}
        folders = {n: f for n, (f, _) in builds.items()}
        hung = {n: f for n, f in folders.items() if rows[n]["outcome"].startswith("hang")}
        rest_f = {n: f for n, f in folders.items() if n not in hung}
        # The finishing ones first (together: each is a short launch), then the hung ones
        # together (each is just waited out to the cap), so no launch shares the GPU with a
        # spinning grid.
        c = no_watchdog(rest_f, args.cap) | no_watchdog(hung, args.cap)
    for n, r in c.items():
        rows[n]["nowd_compile_ms"] = builds[n][1]
        rows[n]["nowd_ms"], rows[n]["nowd_outcome"] = builds[n][1] + r["ms"], r["outcome"]
    print("\n| kernel | static (a) | verdict | GPU + watchdog (b) | outcome | no watchdog (c) "
          "| outcome | (b)/(a) | (c)/(a) |\n|---|---|---|---|---|---|---|---|---|")
    for n, r in rows.items():
        print(f"| {n} | {r['static_ms']:.1f} ms | {', '.join(r['codes']) or 'accepted'} | "
              f"{r['gpu_ms']:.0f} ms | {r['outcome']} | {r['nowd_ms']:.0f} ms | "
              f"{r['nowd_outcome']} | {r['gpu_ms'] / r['static_ms']:.0f}x | "
              f"{r['nowd_ms'] / r['static_ms']:.0f}x |")
    rejected = [r for r in rows.values() if r["codes"]]
    if rejected:
        a = statistics.median(r["static_ms"] for r in rejected)
        b = statistics.median(r["gpu_ms"] for r in rejected)
        cc = statistics.median(r["nowd_ms"] for r in rejected)
        print(f"\nmedian over the {len(rejected)} statically rejected: static {a:.1f} ms, GPU + "
              f"watchdog {b:.0f} ms ({b / a:.0f}x), no watchdog {cc:.0f} ms ({cc / a:.0f}x)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
