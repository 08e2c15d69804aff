"""`cakec run` without a GPU (the GPU stages are skipped, everything before them runs): the
report validates against docs/run.schema.json at every stage it can stop at; watchdog builds
emit one bounded wait per lm.wait and compile; the runtime diagnostics (CAKE-R*) render from
device records and sanitizer logs; a reproducer bundle replays its run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import cakec
from cakec import api
from cakec.diagnostics import render_text
from cakec.feedback import sanitize
from cakec.feedback.report import SCHEMA_VERSION, RunReport
from cakec.feedback.watchdog import Record, diagnostics
from cakec.targets.emit.watchdog import Watchdog

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))
from run_examples import runnable  # noqa: E402

SCHEMA = json.loads((ROOT / "docs" / "run.schema.json").read_text())
BROKEN = ROOT / "bench" / "broken"


def valid(doc: dict) -> dict:
    jsonschema.validate(doc, SCHEMA)
    assert doc["version"] == SCHEMA_VERSION
    return doc


def has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


cpu_only = pytest.mark.skipif(has_gpu(), reason="checks the CPU-side path (GPU stages skipped)")


@cpu_only
@pytest.mark.parametrize("path", runnable(), ids=lambda p: p.stem)
def test_every_runnable_example_reports_up_to_the_launch(path):
    """bench/run_examples.py's list: every example .cake with its sibling .py."""
    report = cakec.run(str(path), seeds=1)
    assert isinstance(report, RunReport)
    doc = valid(report.to_json())
    assert doc["stage"] == "launch" and doc["launch"]["skipped"] and doc["exit_status"] == 2
    assert doc["diagnostics"] == [] and doc["compile"]["error"] is None
    res = doc["compile"]["resources"]
    # what ptxas reported (its -v report is what this checks, not the kernel's quality)
    assert res["registers"] > 0 and res["from"] == "ptxas"
    assert all(isinstance(res[k], int) and res[k] >= 0
               for k in ("stack_bytes", "spill_store_bytes", "spill_load_bytes", "static_smem"))
    assert doc["watchdog"] == {"enabled": True, "budget_ms": 1500.0,
                               "sites": doc["watchdog"]["sites"]}
    # every `lm.wait` of the kernel is bounded (chain_sm80 and kda_decode have none)
    assert doc["watchdog"]["sites"] == len(re.findall(r"^\s*lm\.wait\(", path.read_text(), re.M))


def cakec_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cakec.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_a_rejected_candidate_stops_at_verify_with_the_verifiers_diagnostics():
    r = cakec_cli("run", str(BROKEN / "tail_deadlock.cake"), "--json")
    assert r.returncode == 1, r.stderr
    doc = valid(json.loads(r.stdout))
    assert doc["stage"] == "verify" and not doc["ok"]
    assert [d["code"] for d in doc["diagnostics"]] == ["CAKE-S001"]
    assert doc["diagnostics"][0]["line"] == 45
    assert "[CAKE-S001]" in r.stderr and "Traceback" not in r.stderr


@cpu_only
def test_unchecked_runs_past_the_gates_and_says_so():
    r = cakec_cli("run", str(BROKEN / "missing_arrival.cake"), "--unchecked", "--json")
    assert r.returncode == 2, r.stderr
    doc = valid(json.loads(r.stdout))
    assert doc["unchecked"] and doc["stage"] == "launch"
    assert [d["code"] for d in doc["rejected"]] == ["CAKE-S007"]
    assert "--unchecked" in r.stderr and "it ran anyway" in r.stderr


#: The example contract for two_kernels_ok.cake's kernels: only `shapes` is read before the
#: launch, which a machine without a GPU never reaches.
TWO_KERNELS_PY = """shapes = [{"S": 128}]
outputs = []
baselines = {}
def make_inputs(shape, device): raise RuntimeError("needs a GPU")
def reference(inputs): raise RuntimeError("needs a GPU")
"""


@cpu_only
def test_a_file_of_several_kernels_runs_the_one_named(tmp_path):
    cake = tmp_path / "two.cake"
    cake.write_text((ROOT / "test/lit/frontend/two_kernels_ok.cake").read_text())
    cake.with_suffix(".py").write_text(TWO_KERNELS_PY)
    unnamed = cakec_cli("run", str(cake), "--target", "sm_100a", "--json")
    doc = valid(json.loads(unnamed.stdout))
    assert doc["stage"] == "emit" and unnamed.returncode == 3
    assert "this file has 2 kernels (`first`, `second`); name the one to emit" in \
        doc["diagnostics"][-1]["message"]
    named = cakec_cli("run", str(cake), "--target", "sm_100a", "--kernel", "second", "--json")
    doc = valid(json.loads(named.stdout))
    assert doc["kernel"] == "second" and doc["stage"] == "launch" and named.returncode == 2
    assert doc["watchdog"]["sites"] == 1 and doc["compile"]["error"] is None


def test_a_kernel_without_its_example_module_is_a_usage_stop(tmp_path):
    lonely = tmp_path / "lonely.cake"
    lonely.write_text((ROOT / "examples" / "gemm_bf16.cake").read_text())
    r = cakec_cli("run", str(lonely), "--json")
    assert r.returncode == 2 and "cakec: error:" in r.stderr
    doc = valid(json.loads(r.stdout))
    assert doc["stage"] == "usage" and "lonely.py" in doc["reason"]


def test_every_stage_has_an_exit_status_and_the_schema_knows_them():
    from cakec.feedback.report import EXIT_STATUS, STAGES

    assert set(STAGES) == set(EXIT_STATUS)
    assert set(SCHEMA["properties"]["stage"]["enum"]) == set(STAGES)
    assert {RunReport("k", stage=s).exit_status for s in STAGES} <= set(
        SCHEMA["properties"]["exit_status"]["enum"])


# ---- watchdog builds -----------------------------------------------------------------------


def test_a_watchdog_build_bounds_every_wait_and_compiles():
    from cakec.targets.host.nvrtc import compile_cuda

    source = api.load(str(ROOT / "examples" / "kmeans_assign.cake"))
    plain = api.emit(source).unit
    wd = api.emit(source, watchdog=Watchdog(250.0)).unit
    waits = plain.source.count("cake_mbar_wait(") - 1  # minus the prelude's definition
    assert wd.source.count("cake_wd_wait(") - 1 == waits == len(wd.watchdog["sites"]) == 4
    assert "#define CAKE_WD_BUDGET_NS 250000000ull" in wd.source
    assert plain.watchdog is None and "cake_wd_" not in plain.source
    assert [(s["role"], s["barrier"], s["line"]) for s in wd.watchdog["sites"]] == [
        ("load", "x_empty", 51), ("load", "empty", 55), ("math", "x_full", 63),
        ("math", "full", 67)]
    assert wd.watchdog["roles"]["load"]["working"] == [0]
    assert compile_cuda(wd.source, target=wd.target, output="cubin")[:4] == b"\x7fELF"


def test_unchecked_emission_keeps_the_gates_verdict():
    result = api.emit(api.load(str(BROKEN / "double_wait.cake")), unchecked=True)
    assert result.unit is not None and [d.code for d in result.rejected] == ["CAKE-S001"]
    assert api.emit(api.load(str(BROKEN / "double_wait.cake"))).unit is None


def test_hang_records_become_a_diagnostic_in_the_schedules_terms():
    path = BROKEN / "double_wait.cake"
    result = api.emit(api.load(str(path)), unchecked=True, watchdog=Watchdog())
    table = result.unit.watchdog
    # block 0: the consumer's second wait on full[2] expired; the producer waits on empty[2].
    records = [Record(0, 4, 2, 2, 1, 3, 1_500_200, True, 0, 0),
               Record(0, 4, 2, 2, 1, 3, 1_500_200, True, 0, 0),  # a second lane: one warp
               Record(0, 0, 0, 2, 0, 6, 1_499_000, False, 0, 0)]
    text = render_text(diagnostics(records, table), result.comp.sources)
    name = str(path)
    assert text == (
        f"{name}:46:17: error: hang: role math (warp 4, block 0) waited > 1.5 s on full[2] "
        "for parity 1; this warp saw 3 phase(s) of `full` complete; its producer role load "
        "(warps 0-3) was itself waiting at line 33 on empty[2] [CAKE-R001]\n"
        "                lm.wait(full, stage=s)\n"
        "                ^~\n"
        "note: 1 warp(s) in 1 block(s) were stuck here (blocks 0)\n"
        f"{name}:33:17: note: role load (warp 0) was waiting on empty[2] for parity 0 (1.50 s) "
        "when the grid stopped\n"
        "                lm.wait(empty, stage=s)\n"
        "                ^~\n"
        "help: the phase this wait expects is never completed: compare the producer's trip "
        "count, stage index and arrivals with the consumer's (`cakec verify` explains rejected "
        "schedules; `cakec inspect` prints the derived parities)\n")


def test_a_finished_producer_is_named_as_such():
    result = api.emit(api.load(str(BROKEN / "consumer_overrun.cake")), unchecked=True,
                      watchdog=Watchdog())
    (d,) = diagnostics([Record(5, 8, 1, 0, 0, 16, 1_500_100, True, 0b1111, 0)],
                       result.unit.watchdog)
    assert d.code == "CAKE-R001" and d.span.line == 45
    assert d.message.endswith("its producer role load (warps 0-3) had finished")


# ---- sanitizer mapping ---------------------------------------------------------------------

RACE_LOG = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at kmeans_early_release+0x1a20 in /tmp/k.cu:{w}:kmeans_early_release
=========     and Read access at kmeans_early_release+0x2f30 in /tmp/k.cu:{r}:kmeans_early_release [1024 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def test_racecheck_reports_map_to_cake_lines_and_roles():
    path = BROKEN / "kmeans_early_release.cake"
    result = api.emit(api.load(str(path)), unchecked=True)
    lines = result.unit.source.splitlines()
    # CUDA lines just below the markers of the ||c||² TMA load (line 40) and its load() (53).
    w = next(i for i, t in enumerate(lines, 1) if "kmeans_early_release.cake:40:" in t) + 1
    r = next(i for i, t in enumerate(lines, 1) if "kmeans_early_release.cake:53:" in t) + 1
    reports = sanitize.parse(RACE_LOG.format(w=w, r=r))
    (d,) = sanitize.diagnostics("racecheck", reports, sanitize.Markers(result.unit.source), {},
                                str(path), path.read_text())
    assert d.code == "CAKE-R010" and (d.span.line, d.span.col) == (40, 17)
    assert d.message == ("racecheck: shared-memory race between a write by role load (line 40)"
                         " and a read by role math (line 53)")
    assert d.notes[0].span.line == 53


# The shape of nvdisasm -gi's inline chains (from the H200 run's gemm_sm80 cubin): an ldmatrix
# two helpers deep, then a cp.async one helper deep; innermost frame first.
NVDISASM = """\
	//## File "/tmp/k.cu", line 498 inlined at "/tmp/k.cu", line 564
	//## File "/tmp/k.cu", line 564 inlined at "/tmp/k.cu", line {read}
	//## File "/tmp/k.cu", line {read}
        /*0910*/                   LDSM.16.M88.4 R44, [R47+UR5+0x8000] ;
        /*0920*/                   LOP3.LUT R42, R49, 0x30, R42, 0x78, !PT ;
	//## File "/tmp/k.cu", line 481 inlined at "/tmp/k.cu", line {write}
	//## File "/tmp/k.cu", line {write}
        /*b440*/              @!P6 LDGSTS.E.BYPASS.128.ZFILL [R39+0x8000], desc[UR10][R10.64], P6 ;
"""
# One report of the H200's racecheck log on sm80_early_release.cake (CUDA 13.0): a cp.async
# write against two ldmatrix reads of the same MMA.
H200_RACE = """\
========= Error: Race reported between Write access at void cake_copy_tile<(int)128, (int)32, (int)2, (int)64, (int)8192, (bool)1, (int)128>(unsigned int, const CakeTensor<(int)2> &, int, int, unsigned int)+0xb440 in k.cu:481
=========     and Read access at cake_ldmatrix_x4(unsigned int, unsigned int (&)[4])+0x910 in k.cu:498 [9728 hazards]
=========     and Read access at cake_ldmatrix_x4(unsigned int, unsigned int (&)[4])+0x920 in k.cu:498 [8704 hazards]
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def _sm80_race_lines() -> tuple[Path, str, int, int]:
    path = BROKEN / "sm80_early_release.cake"
    source = api.emit(api.load(str(path)), unchecked=True).unit.source
    lines = source.splitlines()
    # CUDA lines just below the markers of the copy_load of A (line 34) and the MMA (44).
    write = next(i for i, t in enumerate(lines, 1) if "sm80_early_release.cake:34:" in t) + 1
    read = next(i for i, t in enumerate(lines, 1) if "sm80_early_release.cake:44:" in t) + 1
    return path, source, write, read


def test_nvdisasm_chains_map_to_their_outermost_frame_and_opcode():
    table = sanitize.line_table(NVDISASM.format(read=973, write=1011))
    assert table == {0x910: (973, "LDSM.16.M88.4"), 0x920: (973, "LOP3.LUT"),
                     0xb440: (1011, "LDGSTS.E.BYPASS.128.ZFILL")}


@pytest.mark.parametrize("blind", [True, False])
def test_a_cp_async_race_is_unconfirmed_where_racecheck_cannot_see_its_arrival(blind):
    path, source, write, read = _sm80_race_lines()
    pcs = sanitize.line_table(NVDISASM.format(read=read, write=write))
    (d,) = sanitize.diagnostics("racecheck", sanitize.parse(H200_RACE), sanitize.Markers(source),
                                pcs, str(path), path.read_text(), cp_async_blind=blind)
    assert (d.code, d.span.line, d.span.col) == ("CAKE-R010", 34, 13)
    assert d.message == ("racecheck: shared-memory race between a write by role load (line 34)"
                         " and a read by role math (line 44)"
                         + (" (unconfirmed: the write is a cp.async)" if blind else ""))
    assert [n.span.line if n.span else None for n in d.notes] == [44] + ([None] if blind else [])
    assert d.severity == ("warning" if blind else "error")


def test_a_report_without_nvdisasm_falls_back_to_the_reports_own_line():
    """The report's CUDA line is the innermost frame (a helper above the kernel body): no
    .cake line, said so, never a wrong one."""
    path, source, _, _ = _sm80_race_lines()
    (d,) = sanitize.diagnostics("racecheck", sanitize.parse(H200_RACE), sanitize.Markers(source),
                                {}, str(path), path.read_text(), cp_async_blind=True)
    assert d.span is None and d.severity == "error"
    assert "outside the kernel body (CUDA line 481)" in d.message


@pytest.mark.parametrize("target,cc,arch", [
    ("sm_90a", (9, 0), "sm_90a"), ("sm_80", (9, 0), "sm_90"), ("sm_80", (8, 6), "sm_80"),
    ("sm_89", (8, 9), "sm_89"), ("sm_89", (9, 0), "sm_90")])
def test_a_portable_target_is_built_for_the_gpu_it_runs_on(target, cc, arch):
    from cakec.feedback.runner import arch_for

    assert arch_for(target, cc) == (arch, None)


@pytest.mark.parametrize("target,cc", [("sm_100a", (9, 0)), ("sm_90a", (10, 0)),
                                       ("sm_89", (8, 0))])
def test_a_target_the_gpu_cannot_run_is_said_so(target, cc):
    from cakec.feedback.runner import arch_for

    assert arch_for(target, cc) == (target, f"the kernel is for {target} and this GPU is "
                                            f"sm_{cc[0]}{cc[1]}")


@pytest.mark.skipif(sanitize.find_tool("nvdisasm") is None, reason="nvdisasm not installed")
def test_pcs_map_to_the_outermost_inlined_line_of_the_kernel_body():
    result = api.emit(api.load(str(ROOT / "examples" / "kmeans_assign.cake")))
    cubin = api.binary(result.unit, "cubin", ("-lineinfo",))
    pcs = sanitize.outermost_lines(cubin)
    markers = sanitize.Markers(result.unit.source)
    body = min(markers.lines)
    # Every PC's inline chain ends in the kernel body (taking the chain's first frame instead
    # left 16 % of them, the helpers inlined two deep, outside it).
    inside = [pc for pc, (line, _) in pcs.items() if line >= body]
    assert pcs and len(inside) == len(pcs)
    roles = {markers.cake_line(line)[2] for line, _ in pcs.values() if markers.cake_line(line)}
    assert {"load", "math"} <= roles
    assert {"HGMMA.64x128x16.F32.BF16", "SYNCS.EXCH.64"} & {op for _, op in pcs.values()}


# ---- distillation record -------------------------------------------------------------------


def test_a_bundle_holds_what_replays_the_failure(tmp_path):
    from cakec.feedback.record import write_bundle
    from cakec.feedback.runner import _State

    src = ROOT / "examples" / "gemm_bf16.cake"
    report = RunReport(str(src), stage="numerics", reason="seed 7: rel_err 0.5 > 0.005",
                       kernel="gemm_bf16", target="sm_90a", shape={"M": 64, "N": 64, "K": 64})
    state = _State(report, True, 1500.0, 30.0)
    state.source, state.seeds = api.load(str(src)), [7, 8, 9]
    bundle = Path(write_bundle(str(tmp_path), state))
    assert bundle.name == "gemm_bf16-numerics-7"
    assert (bundle / "gemm_bf16.cake").read_text() == src.read_text()
    assert (bundle / "gemm_bf16.py").is_file()
    doc = valid(json.loads((bundle / "report.json").read_text()))
    assert doc["record"] == str(bundle)
    assert ("cakec run gemm_bf16.cake --target sm_90a --kernel gemm_bf16 --shape M=64,N=64,K=64 "
            "--seed 7 --seeds 3 --json") in (bundle / "replay.sh").read_text()


@pytest.mark.skipif(shutil.which("cakec") is None, reason="cakec not on PATH")
def test_emit_watchdog_flag():
    r = subprocess.run(["cakec", "emit", str(BROKEN / "orphan_barrier.cake"), "--unchecked",
                        "--watchdog", "--watchdog-ms", "100"], capture_output=True, text=True)
    assert r.returncode == 0 and "CAKE_WD_BUDGET_NS 100000000ull" in r.stdout
    assert "warning: deadlock" in r.stderr and "[CAKE-S001]" in r.stderr


# ---- speed of light ------------------------------------------------------------------------


@pytest.mark.parametrize("name,dtypes,scale", [("gemm_bf16", {"bf16"}, 1.0),
                                               ("gemm_fp8", {"e4m3"}, 2.0),
                                               ("kmeans_csq", set(), 1.0)])
def test_the_tensor_peak_follows_the_kernels_mma_dtype(name, dtypes, scale):
    """On the H200 an fp8 GEMM ran at 1217 TFLOP/s, 114 % of the bf16 peak the report used
    then, and was flagged `suspicious`: the roofline of an e4m3 MMA is twice the bf16 one."""
    from cakec.feedback import roofline

    module = api.emit(api.load(str(ROOT / "examples" / f"{name}.cake"))).comp.module
    assert roofline.mma_dtypes(module) == dtypes
    bf16 = roofline.tensor_peak_tflops("sm_90a", 132, 1_980_000)
    assert bf16 == pytest.approx(4096 * 132 * 1.98e9 / 1e12)
    assert roofline.tensor_peak_tflops("sm_90a", 132, 1_980_000, dtypes) == scale * bf16
    # a portable kernel built for the GPU's own arch gets that GPU's peak
    assert roofline.tensor_peak_tflops("sm_90", 132, 1_980_000) == bf16


def test_the_summary_says_when_a_portable_kernel_was_built_for_this_gpu():
    from cakec.feedback.text import summary

    r = RunReport("k.cake", stage="launch", reason="GPU stages skipped: torch is not installed",
                  kernel="gemm_sm80", target="sm_80", shape={"M": 8})
    assert summary(r).startswith("gemm_sm80 sm_80 M=8 | stopped at launch")
    r.compile = {"arch": "sm_90", "error": None}
    assert summary(r).startswith("gemm_sm80 sm_80 (built for sm_90) M=8 | stopped at launch")
    r.compile["arch"] = "sm_80"
    assert summary(r).startswith("gemm_sm80 sm_80 M=8 |")


def test_ptxas_counts_it_leaves_out_are_zero():
    from cakec.feedback.runner import resources

    res = resources("ptxas info    : Used 118 registers, used 1 barriers\n")
    assert (res["registers"], res["static_smem"], res["stack_bytes"]) == (118, 0, 0)
    assert resources("no report")["registers"] is None
    assert resources("no report")["static_smem"] is None
