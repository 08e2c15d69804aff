"""The agent's feedback loop on an sm_90 GPU (docs/run.md): deadlocking `--unchecked`
candidates stopped by the watchdog and reported with the role, barrier, stage, parity and
.cake line, one after another in this process and its CUDA context; a planted shared-memory
race seen by compute-sanitizer racecheck at the .cake lines of both accesses (and the same
kernel without the bug free of racecheck errors: with NVRTC < 13.1 racecheck reports both,
as unconfirmed warnings); a wrong-result kernel the verifier accepts recorded as a
reproducer bundle whose replay fails the same way.

    pytest -m gpu test/gpu/test_feedback_gpu.py
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from gpu_marks import gpu_marks  # noqa: E402

import cakec  # noqa: E402
from cakec.feedback.sanitize import CP_ASYNC_ORDERED_SINCE, find_tool  # noqa: E402
from cakec.targets.host.nvrtc import nvrtc_version  # noqa: E402

pytestmark = gpu_marks(torch, lambda cc: cc == (9, 0), "needs an sm_90 (Hopper) GPU")

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "bench" / "broken"
GEMM = "M=512,N=512,K=1024"
ONE_STEP = "M=512,N=512,K=64"  # one K step: the verifier's witness launch (K = 0 → 1 step)

#: kernel, shape, and where the watchdog must find it stuck: (role, barrier, stage, parity,
#: line). One grid: 8 CTAs of one 128×256 tile each, 16 (or 1) K steps through a 4-stage ring.
DEADLOCKS = [
    # the consumer's 17th step waits for the 5th phase of full[0], which nobody completes
    ("consumer_overrun", GEMM, ("math", "full", 0, 0, 45)),
    # a wrong-parity wait: the second wait on full[0] expects phase 1 (parity 1)
    ("double_wait", GEMM, ("math", "full", 0, 1, 46)),
    # a missing producer arrival: B is never loaded, full gets 1 of its 2 arrivals
    ("missing_arrival", GEMM, ("math", "full", 0, 0, 44)),
    # a consumer waiting on a barrier nobody arrives on
    ("orphan_barrier", GEMM, ("math", "ready", 0, 0, 46)),
    # trip count 1: the producer's `range(0, k_tiles - 1)` runs no trip at all
    ("tail_deadlock", ONE_STEP, ("math", "full", 0, 0, 45)),
    # init_count 3, two TMA arrivals per phase
    ("wrong_init_count", GEMM, ("math", "full", 0, 0, 44)),
    # the producer fills stage 1, the consumer waits for stage 0
    ("wrong_producer_stage", ONE_STEP, ("math", "full", 0, 0, 44)),
    # the consumer waits on stage 1, which the one step never fills
    ("wrong_stage", ONE_STEP, ("math", "full", 1, 0, 44)),
]


@pytest.mark.parametrize("name,shape,where", DEADLOCKS, ids=[d[0] for d in DEADLOCKS])
def test_a_deadlock_is_reported_in_the_schedules_terms(name, shape, where):
    role, barrier, stage, parity, line = where
    report = cakec.run(str(BROKEN / f"{name}.cake"), shape=shape, unchecked=True, seeds=1,
                       seed=1, timing=False)
    assert report.stage == "hang" and report.exit_status == 6, report.reason
    assert report.rejected and report.rejected[0]["code"].startswith("CAKE-S")
    hang = report.hang
    assert hang["stopped_by_watchdog"] and hang["seconds"] < 3.0
    hangs = [d for d in report.diagnostics if d["code"] == "CAKE-R001"]
    assert line in [d["line"] for d in hangs], hangs
    expired = [r for r in hang["records"] if r["expired"] and r["line"] == line]
    assert expired, hang["records"]
    got = expired[0]
    assert (got["role"], got["barrier"], got["stage"], got["parity"]) == (role, barrier, stage,
                                                                          parity)
    text = next(d for d in hangs if d["line"] == line)["message"]
    expected_where = f"{barrier}[{stage}]" if barrier != "ready" else barrier
    assert f"role {role} " in text and f"on {expected_where} for parity {parity}" in text
    # The grid left cooperatively: this process's context still computes.
    assert hang["gpu_usable_after"] and report.context_ok


def test_the_next_kernel_runs_after_the_deadlocks_in_the_same_process():
    """Runs after the deadlock tests (file order): a healthy candidate in the same process,
    on the same context, through every stage."""
    report = cakec.run(str(ROOT / "examples" / "gemm_bf16.cake"), shape=GEMM, seeds=3,
                       timing=False)
    assert report.stage == "done", report.reason
    assert all(s["correct"] and s["unwritten"] == 0 for s in report.numerics["seeds"])


needs_sanitizer = pytest.mark.skipif(find_tool("compute-sanitizer") is None,
                                     reason="compute-sanitizer not installed")
RACE_SHAPE = "M=256,N=256,K=256"  # 4 CTAs, 8 K steps: every stage is refilled once


@needs_sanitizer
def test_racecheck_sees_the_planted_race_at_its_cake_lines():
    report = cakec.run(str(BROKEN / "sm80_early_release.cake"), shape=RACE_SHAPE,
                       unchecked=True, seeds=1, seed=3, timing=False, sanitize="racecheck")
    assert report.compile["arch"] == "sm_90"  # the sm_80 kernel, built for this GPU
    san = report.sanitizer
    print(json.dumps(san, indent=1))  # the evidence, shown by `pytest -rA`
    assert san["available"] and san["raw_reports"] > 0, san["log_tail"]
    races = [d for d in san["reports"] if d["code"] == "CAKE-R010"]
    # The write is the load role's cp.async refill (copy_load, lines 34/35), the read the
    # math role's ldmatrix of the same stage (the MMA, line 44).
    lines = {(d["line"], n["line"]) for d in races for n in d["notes"] if n["line"]}
    assert lines & {(34, 44), (35, 44)}, races
    assert all(d["message"].startswith("racecheck: shared-memory race between a write by role "
                                       "load (line 3") for d in races)
    assert all("a read by role math (line 44)" in d["message"] for d in races)
    # With NVRTC < 13.1 racecheck cannot tell this race from a correct cp.async pipeline
    # (the control below): it is a warning then, and does not stop the run.
    if nvrtc_version() < CP_ASYNC_ORDERED_SINCE:
        assert {d["severity"] for d in races} == {"warning"}
    assert report.stage in ("sanitize", "numerics", "done")


@needs_sanitizer
def test_racecheck_is_clean_on_the_same_kernel_without_the_bug():
    """The control: examples/gemm_sm80.cake releases the stage after its MMA."""
    report = cakec.run(str(ROOT / "examples" / "gemm_sm80.cake"), shape=RACE_SHAPE, seeds=1,
                       seed=3, timing=False, sanitize="racecheck")
    san = report.sanitizer
    print(json.dumps(san, indent=1))
    assert san["available"] and san["exit_status"] == 0, san["log_tail"]
    errors = [d for d in san["reports"] if d["code"] == "CAKE-R010" and d["severity"] == "error"]
    assert errors == [], san["log_tail"]
    assert report.stage == "done", report.reason


CHAIN_SHAPE = "M=256,K=256"  # 4 CTAs, 8 K steps


@needs_sanitizer
def test_racecheck_confirms_a_race_between_warps_of_one_role():
    """Plain stores and ldmatrix, ordered in the correct kernel by the role's named barrier:
    a race racecheck sees with any compiler, so it is an error (not an unconfirmed warning)."""
    report = cakec.run(str(BROKEN / "sm80_missing_fence.cake"), shape=CHAIN_SHAPE,
                       unchecked=True, seeds=1, seed=3, timing=False, sanitize="racecheck")
    san = report.sanitizer
    print(json.dumps(san, indent=1))
    assert san["available"] and san["raw_reports"] > 0, san["log_tail"]
    races = [d for d in san["reports"] if d["code"] == "CAKE-R010"]
    # The writes are the stores of the A and B stages (lines 27, 29), the read the MMA's
    # ldmatrix (line 30), all in role math (racecheck names either access first).
    pairs = {frozenset((d["line"], n["line"])) for d in races for n in d["notes"] if n["line"]}
    assert pairs and pairs <= {frozenset((27, 30)), frozenset((29, 30))}, races
    assert {d["severity"] for d in races} == {"error"}
    assert all("role math (line 30)" in d["message"] for d in races)
    assert report.stage in ("sanitize", "numerics"), report.reason  # an error stops the run


@needs_sanitizer
def test_racecheck_is_clean_on_the_fenced_chain():
    """The control: examples/chain_sm80.cake syncs the role after its stores."""
    report = cakec.run(str(ROOT / "examples" / "chain_sm80.cake"), shape=CHAIN_SHAPE, seeds=2,
                       seed=3, timing=False, sanitize="racecheck")
    san = report.sanitizer
    print(json.dumps(san, indent=1))
    assert san["available"] and san["exit_status"] == 0, san["log_tail"]
    assert [d for d in san["reports"] if d["code"] == "CAKE-R010"] == [], san["log_tail"]
    assert report.stage == "done", report.reason


def _replay(bundle: Path) -> dict:
    """replay.sh's `cakec run` line, through this interpreter (cakec may not be on PATH)."""
    line = next(t for t in (bundle / "replay.sh").read_text().splitlines()
                if "cakec run" in t)
    args = shlex.split(line.split("cakec run", 1)[1])
    r = subprocess.run([sys.executable, "-m", "cakec.cli", "run", *args], cwd=bundle,
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr
    doc = json.loads(r.stdout)
    assert doc["exit_status"] == r.returncode
    return doc


def test_an_unpredicted_wrong_result_is_recorded_and_replays(tmp_path):
    """wrong_coordinate.cake verifies (a safe schedule, a wrong coordinate): only the GPU
    sees the bug, and --record keeps it."""
    path = BROKEN / "wrong_coordinate.cake"
    report = cakec.run(str(path), shape=GEMM, seeds=3, seed=11, timing=False,
                       record=str(tmp_path))
    assert report.rejected == [] and not report.unchecked
    assert report.stage == "numerics" and report.exit_status == 7
    bad = [s for s in report.numerics["seeds"] if not s["correct"]]
    assert len(bad) == 3 and all(s["unwritten"] == 0 and s["rel_err"] > 0.5 for s in bad)
    bundle = Path(report.record)
    assert bundle == tmp_path / "wrong_coordinate-numerics-11"
    assert (bundle / "wrong_coordinate.cake").read_text() == path.read_text()
    assert (bundle / "wrong_coordinate.py").is_file()
    assert json.loads((bundle / "report.json").read_text())["stage"] == "numerics"
    again = _replay(bundle)
    assert again["stage"] == "numerics" and again["exit_status"] == 7
    assert [s["seed"] for s in again["numerics"]["seeds"]] == [11, 12, 13]
    assert [s["rel_err"] for s in again["numerics"]["seeds"]] == [
        s["rel_err"] for s in report.numerics["seeds"]]


@needs_sanitizer
def test_a_fault_still_gets_its_sanitizer_report():
    """missing_wait.cake faults on the H200 (its CTAs exit with TMA loads in flight), which
    loses the context: in a process of its own, so the tests after it keep theirs. The
    sanitizer runs anyway, in its own process."""
    r = subprocess.run([sys.executable, "-m", "cakec.cli", "run",
                        str(BROKEN / "missing_wait.cake"), "--unchecked", "--seeds", "1",
                        "--no-timing", "--sanitize", "memcheck", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stdout.strip(), (r.returncode, r.stderr[-3000:])  # the process died before its report
    doc = json.loads(r.stdout)
    assert doc["stage"] == "launch" and r.returncode == 5 and not doc["context_ok"]
    assert "faulted" in doc["reason"]
    assert doc["sanitizer"]["available"] and doc["sanitizer"]["exit_status"] is not None
