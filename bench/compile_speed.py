"""How fast cakec rejects or accepts a kernel: the number an agent's search loop lives on.

Prints, as medians over repeated runs, each against its goal (issue 17):
  * in-process parse + build + verify (the whole `cakec verify` pipeline, warm) of the
    canonical example (goal ≤ 5 ms), the GEMM and k-means examples (≤ 15 ms) and a
    generated 200-line kernel, with the parse / frontend / passes split and the protocol
    model's share of the passes (derive-barriers + verify-safety);
  * the wall time of `cakec verify examples/seed_fragment.cake` as a fresh process (goal
    ≤ 250 ms), next to the interpreter's own start-up (`python -c pass`) and the import of
    xDSL's builtin + arith dialects, the floor of any process that builds Cake IR (alone,
    and after `import cakec`, whose start-up cache serves the code xDSL's dataclasses
    compile: cakec/codecache.py; warmed by the first round like the bytecode). Fresh
    processes run with Python's bytecode cache on (in a temporary PYTHONPYCACHEPREFIX,
    warmed first), as an installed package has it, even where the calling environment sets
    PYTHONDONTWRITEBYTECODE (recompiling every module would add ~120 ms to each start).

With `--cpu`, every number is CPU time instead of wall time (process CPU in-process, the
child's user + system time for fresh processes): on a machine shared with other work, wall
medians move with the load, CPU time much less; the goals are wall-time goals.

With `--baseline PYTHON`, the same rows are timed for this checkout and for the cakec that
PYTHON imports (a venv of the commit before a change), alternating sample by sample, with
medians, minima and ratios: the before/after of a change measured in one run.

    python bench/compile_speed.py [--runs N] [--process-runs N] [--cpu] [--json PATH]
                                  [--baseline PYTHON]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
CANONICAL = ROOT / "examples" / "seed_fragment.cake"
#: (name, kernel, goal in ms or None) of the in-process rows
IN_PROCESS = [("canonical", CANONICAL, 5.0), ("gemm_bf16", ROOT / "examples" / "gemm_bf16.cake", 15.0),
              ("kmeans_assign", ROOT / "examples" / "kmeans_assign.cake", 15.0)]
PROCESS_GOAL_MS = 250.0


def generated_kernel(lines: int = 200) -> str:
    """A realistic kernel of about `lines` lines: one two-stage TMA → MMA pipeline fed by
    consecutive K-loops (the shape of a split persistent GEMM), with scalar tile math."""
    head = [
        "@cake.schedule()",
        "def big(lm, A: LM.tma2d, B: LM.tma2d, M: LM.i32, N: LM.i32, K: LM.i32):",
        "    lm.grid(lm.cdiv(M, 128), lm.cdiv(N, 128))",
        "    m_tile = lm.block_id(0)",
        "    n_tile = lm.block_id(1)",
        "    k_tiles = lm.cdiv(K, 64)",
        "    pool = lm.smem(65536)",
        "    sa = pool.view(offset=0, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)",
        "    sb = pool.view(offset=32768, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b)",
        "    acc = lm.tmem(cols=0, width=128, shape=(128, 128), dtype=lm.f32)",
        "    load = lm.role(warps=[0])",
        "    mma = lm.role(warps=[1])",
        "    pipe = lm.pipeline(stages=2)",
        "    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=2, pipeline=pipe)",
        "    empty = lm.barrier(count=2, prod=[mma], cons=[load], init_count=1, pipeline=pipe)",
    ]
    body: list[str] = []
    group = 0
    while len(head) + len(body) + 15 <= lines:
        body += [
            "",
            f"    # K-block {group}: tiles [{group * 8}, {group * 8 + 8}) of this block's K range",
            f"    kb{group} = (k_tiles // 16) * {group} + m_tile % 2",
            "    with load:",
            "        for k in lm.range(0, 8):",
            "            lm.wait(empty, stage=k % 2)",
            f"            sa.tma_load(A, coords=(m_tile, kb{group} + k), stage=k % 2, barrier=full)",
            f"            sb.tma_load(B, coords=(n_tile, kb{group} + k), stage=k % 2, barrier=full)",
            "    with mma:",
            "        for k in lm.range(0, 8):",
            "            lm.wait(full, stage=k % 2)",
            "            lm.fence_proxy()",
            f"            lm.mma(acc, sa[k % 2], sb[k % 2], init=(k + {group} == 0))",
            "            lm.commit(empty, stage=k % 2)",
        ]
        group += 1
    text = "\n".join(head + body)
    return text + "\n" + "\n" * max(0, lines - text.count("\n") - 1)


#: The clock of every measurement (`--cpu` switches it): seconds, monotonic.
CLOCK: Callable[[], float] = time.perf_counter


def _children_cpu() -> float:
    """User + system CPU seconds of the finished child processes."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _medians_ms(fns: dict[str, Callable[[], object]], runs: int,
                clock: Callable[[], float] | None = None) -> dict[str, float]:
    """Median of each function, timed in interleaved rounds so that a burst of load on the
    machine hits all of them alike."""
    clock = clock or CLOCK
    for fn in fns.values():
        fn()  # first call: grammar load, lazy imports
    samples: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            t = clock()
            fn()
            samples[key].append(clock() - t)
    return {k: 1e3 * statistics.median(v) for k, v in samples.items()}


def _stage_fns(name: str, text: str) -> dict[str, Callable[[], object]]:
    """The timed stages of one kernel: the whole verify, parse, the IR build, build + passes,
    and the protocol passes (derive-barriers + verify-safety), whose function returns the
    seconds they took (the other passes run too: verify-safety reads what they derive)."""
    from cakec.diagnostics import DiagnosticSink
    from cakec.driver import SourceFile, _pipeline, build, make_context, run_passes, \
        verify_source
    from cakec.frontend.ir_builder import Frontend
    from cakec.frontend.parser import parse
    from cakec.passes import expand

    src = SourceFile(name, text)
    tree = parse(text, name)
    protocol = ("derive-barriers", "verify-safety")

    def passes() -> None:
        c = build(src)
        run_passes(c, "verify")

    def protocol_passes() -> float:
        spent = 0.0
        c = build(src)
        ctx = make_context(c)
        for p in _pipeline(expand("verify")).passes:
            t = CLOCK()
            p.apply(ctx, c.module)
            if p.name in protocol:
                spent += CLOCK() - t
        return spent

    return {"total": lambda: verify_source(src), "parse": lambda: parse(text, name),
            "frontend": lambda: Frontend(name, DiagnosticSink()).build(tree),
            "build": lambda: build(src), "build+passes": passes, "protocol": protocol_passes}


def in_process(name: str, text: str, runs: int) -> dict:
    from cakec.driver import SourceFile, verify_source

    comp = verify_source(SourceFile(name, text))
    fns = _stage_fns(name, text)
    protocol = fns.pop("protocol")
    ms = _medians_ms(fns, runs)
    spent_runs = max(3, runs // 4)
    protocol()
    spent = sum(protocol() for _ in range(spent_runs))  # type: ignore[misc]
    return {
        "total_ms": ms["total"], "parse_ms": ms["parse"], "frontend_ms": ms["frontend"],
        "passes_ms": max(0.0, ms["build+passes"] - ms["build"]),
        "protocol_ms": 1e3 * spent / spent_runs,  # a mean, not a median
        "lines": text.count("\n") + 1,
        "diagnostics": len(comp.sink.diagnostics),
        "errors": [f"{d.code} {d.message}" for d in comp.sink.diagnostics][:3],
    }


def _kernels(runs: int) -> list[tuple[str, str, int]]:
    """(row name, text, repetitions) of the in-process rows."""
    return [*((name, path.read_text(), runs) for name, path, _ in IN_PROCESS),
            ("generated_200", generated_kernel(200), max(10, runs // 5))]


def _worker() -> None:
    """`--worker`: the stages of every row, timed one request at a time (a line `ROW STAGE`
    on stdin, the seconds on stdout), with the cakec of the interpreter that runs it: the
    side-by-side run (`--baseline`) drives one worker per checkout."""
    fns = {(name, stage): fn for name, text, _ in _kernels(1)
           for stage, fn in _stage_fns(name, text).items()}
    for fn in fns.values():
        fn()  # grammar load, lazy imports
    for line in sys.stdin:
        row, stage = line.split()
        t = CLOCK()
        r = fns[(row, stage)]()
        print(r if isinstance(r, float) else CLOCK() - t, flush=True)


def side_by_side(baseline: str, runs: int, process_runs: int, cpu: bool) -> dict:
    """Every in-process stage and the fresh `cakec verify`, for this checkout and for the
    one `baseline` (a Python interpreter whose cakec is the baseline) imports, alternating
    sample by sample so that the machine's load hits both alike. Medians and minima, ms."""
    import tempfile

    flags = ["--worker", *(["--cpu"] if cpu else [])]
    pythons = {"this": sys.executable, "baseline": baseline}
    caches = {k: tempfile.mkdtemp(prefix=f"cake-{k}-") for k in pythons}
    workers = {k: subprocess.Popen([py, str(Path(__file__).resolve()), *flags], cwd=ROOT,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                   env={**os.environ, "CAKEC_CACHE_DIR": caches[k]})
               for k, py in pythons.items()}
    samples: dict[tuple[str, str, str], list[float]] = {}
    stages = ("total", "parse", "frontend", "build", "build+passes", "protocol")
    for name, _, n in _kernels(runs):
        for i in range(n):
            for stage in stages:
                order = list(workers) if i % 2 == 0 else list(reversed(workers))
                for k in order:
                    w = workers[k]
                    assert w.stdin and w.stdout
                    w.stdin.write(f"{name} {stage}\n")
                    w.stdin.flush()
                    samples.setdefault((k, name, stage), []).append(float(w.stdout.readline()))
    for w in workers.values():
        assert w.stdin
        w.stdin.close()
        w.wait()
    verify = {k: [str(Path(py).parent / "cakec"), "verify", str(CANONICAL)]
              for k, py in pythons.items()}
    clock = _children_cpu if cpu else time.perf_counter
    with tempfile.TemporaryDirectory(prefix="cake-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        for i in range(process_runs + 1):  # the first round writes the bytecode caches
            for k in (list(verify) if i % 2 == 0 else list(reversed(verify))):
                t = clock()
                subprocess.run(verify[k], capture_output=True, cwd=ROOT,
                               env={**env, "CAKEC_CACHE_DIR": caches[k]})
                if i:
                    samples.setdefault((k, "process", "cakec_verify"), []).append(clock() - t)
    return {" ".join(key): {"median_ms": 1e3 * statistics.median(v), "min_ms": 1e3 * min(v)}
            for key, v in samples.items()}


def _print_side_by_side(r: dict, cpu: bool) -> None:
    unit = "CPU ms" if cpu else "ms"
    print(f"side by side ({unit}: median / min; ratio = this / baseline of the medians)")
    print(f"{'row':16} {'stage':13} {'this':>17} {'baseline':>17} {'ratio':>6}")
    rows = [(name, stage) for name, _, _ in _kernels(1)
            for stage in ("total", "parse", "frontend", "build+passes", "protocol")]
    for name, stage in [*rows, ("process", "cakec_verify")]:
        a, b = r[f"this {name} {stage}"], r[f"baseline {name} {stage}"]
        print(f"{name:16} {stage:13} {a['median_ms']:8.2f} /{a['min_ms']:7.2f} "
              f"{b['median_ms']:8.2f} /{b['min_ms']:7.2f} "
              f"{a['median_ms'] / b['median_ms']:6.2f}")


def fresh_process(runs: int) -> dict:
    """Wall times of fresh interpreters, interleaved like the in-process ones, with the
    bytecode cache on (see the module docstring)."""
    import tempfile

    cakec = shutil.which("cakec")
    verify = [cakec, "verify", str(CANONICAL)] if cakec else [
        sys.executable, "-m", "cakec.cli", "verify", str(CANONICAL)]
    argvs = {
        "cakec_verify_ms": verify,
        "python_pass_ms": [sys.executable, "-c", "pass"],
        "python_import_xdsl_ms": [sys.executable, "-c",
                                  "import xdsl.dialects.builtin, xdsl.dialects.arith"],
        # the same import after `import cakec`, whose start-up cache (cakec/codecache.py)
        # serves the methods xDSL's dataclasses would otherwise compile
        "cakec_import_xdsl_ms": [sys.executable, "-c",
                                 "import cakec, xdsl.dialects.builtin, xdsl.dialects.arith"],
    }
    with tempfile.TemporaryDirectory(prefix="cake-pyc-") as pyc:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = pyc
        return _medians_ms({k: (lambda a=a: subprocess.run(a, capture_output=True, cwd=ROOT,
                                                            env=env))
                            for k, a in argvs.items()}, runs,
                           _children_cpu if CLOCK is time.process_time else None)


def _verdict(ms: float, goal: float | None) -> str:
    if goal is None:
        return ""
    return f"goal ≤ {goal:g} ms: " + ("met" if ms <= goal else f"missed ({ms / goal:.1f}×)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200, help="in-process repetitions")
    ap.add_argument("--process-runs", type=int, default=15, help="fresh-process repetitions")
    ap.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    ap.add_argument("--cpu", action="store_true",
                    help="CPU time instead of wall time (steadier on a loaded machine)")
    ap.add_argument("--baseline", metavar="PYTHON",
                    help="time this checkout side by side with the cakec that PYTHON imports "
                         "(e.g. a venv of the commit before a change), sample by sample")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    if args.worker:
        _worker()
        return
    if args.baseline:
        r = side_by_side(args.baseline, args.runs, args.process_runs, args.cpu)
        _print_side_by_side(r, args.cpu)
        if args.json:
            Path(args.json).write_text(json.dumps(r, indent=2) + "\n")
        return

    results: dict = {name: in_process(name, text, n) for name, text, n in _kernels(args.runs)}
    results["process"] = fresh_process(args.process_runs)
    goals = {name: goal for name, _, goal in IN_PROCESS}
    unit = "median CPU ms" if args.cpu else "median ms"
    print(f"{f'in-process ({unit})':24} {'total':>7} {'parse':>7} {'frontend':>8} "
          f"{'passes':>7} {'protocol':>8}  lines  diags  against the goal")
    for key in [*goals, "generated_200"]:
        r = results[key]
        print(f"{key:24} {r['total_ms']:7.2f} {r['parse_ms']:7.2f} {r['frontend_ms']:8.2f} "
              f"{r['passes_ms']:7.2f} {r['protocol_ms']:8.2f}  {r['lines']:5}  "
              f"{r['diagnostics']:5}  {_verdict(r['total_ms'], goals.get(key))}")
        for e in r["errors"]:
            print(f"{'':26}{e}")
    p = results["process"]
    print(f"\nfresh process (median of {args.process_runs}"
          f"{', CPU time' if args.cpu else ''}, bytecode cached):")
    print(f"  cakec verify {CANONICAL.name:22} {p['cakec_verify_ms']:7.1f} ms   "
          f"{_verdict(p['cakec_verify_ms'], PROCESS_GOAL_MS)}")
    print(f"  python -c pass {'':20} {p['python_pass_ms']:7.1f} ms   (interpreter floor)")
    print(f"  import xdsl builtin + arith {'':7} {p['python_import_xdsl_ms']:7.1f} ms   "
          "(IR library floor)")
    print(f"  import cakec, then the same {'':7} {p['cakec_import_xdsl_ms']:7.1f} ms   "
          "(the floor with Cake's start-up cache)")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
