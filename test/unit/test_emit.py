"""The sm_90a CUDA emitter, its launch metadata and `cakec emit`, without a GPU: what the
GEMM example lowers to, that NVRTC builds it, and that everything the emitter cannot
lower correctly is a diagnostic instead of code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import shared_builds

from cakec import api
from cakec.runtime.args import Metadata

ROOT = Path(__file__).resolve().parents[2]
GEMM = ROOT / "examples" / "gemm_bf16.cake"


@pytest.fixture(scope="module")
def gemm():
    result = api.emit(api.load(str(GEMM)))
    assert result.unit is not None, [d.message for d in result.comp.sink.diagnostics]
    return result.unit


def emit_text(text: str, target: str | None = None) -> api.Emitted:
    return api.emit(api.load(source=text), target)


def codes(result: api.Emitted) -> list[str]:
    return [d.code for d in result.comp.sink.diagnostics]


def cakec(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cakec.cli", *args], capture_output=True,
                          text=True, cwd=ROOT)


# ---- the GEMM --------------------------------------------------------------------------------


def test_gemm_roles_dispatch_with_register_budgets(gemm):
    src = gemm.source
    assert "if (cake_warp < 4u) {" in src
    assert "} else if (cake_warp >= 4u && cake_warp < 12u) {" in src
    assert "cake_setmaxnreg_dec<40>();" in src and "cake_setmaxnreg_inc<232>();" in src
    assert "__launch_bounds__(384, 1)" in src


def test_gemm_barriers_use_derived_counts_and_parities(gemm):
    src = gemm.source
    assert "cake_mbar_init(full + 8u * i, 2);" in src    # two TMA loads per phase
    assert "cake_mbar_init(empty + 8u * i, 2);" in src   # one commit per math warpgroup
    assert "u32 empty_phase = 0xfu;" in src              # first lap of `empty` passes
    assert "u32 full_phase = 0u;" in src
    assert "cake_mbar_wait(full + 8u * s, (u32)(full_phase >> s) & 1u);" in src
    assert "full_phase ^= 1u << s;" in src


def test_gemm_tma_expects_the_derived_bytes_per_copy(gemm):
    src = gemm.source
    assert re.search(r"cake_mbar_arrive_expect_tx\(full \+ 8u \* s, 16384u\);\n\s*"
                     r"cake_tma_load_2d\(sa \+ \(u32\)s \* 16384u, &A_tmap0, full \+ 8u \* s, "
                     r"k \* 64, m_tile \* 128\);", src)
    assert "cake_tma_load_2d(sb + (u32)s * 32768u, &B_tmap0, full + 8u * s, k * 64, " \
           "n_tile * 256);" in src
    # The producer role is one elected thread.
    assert "if (cake_warp == 0u && cake_elect_one()) {" in src


def test_gemm_wgmma_descriptors_and_k_steps(gemm):
    src = gemm.source
    # The descriptor's constant bits, then the stage address in 16-byte units plus the K step's.
    calls = re.findall(r"cake_wgmma_m64n256k16_f32_bf16_bf16\(acc\[0\], \(\(\(u64\)(0x[0-9a-f]+)u << 32\)"
                       r" \| \(u32\)\((0x[0-9a-f]+)u \+ \(\(\(cake_a\) & 0x3FFFFu\) >> 4\)"
                       r"(?: \+ (\d+)u)?\)\)", src)
    assert [16 * int(units or 0) for _, _, units in calls] == [0, 32, 64, 96]
    from cakec.targets.descriptors import decode_fields

    fields = decode_fields("wgmma_smem", int(calls[0][0], 16) << 32 | int(calls[0][1], 16))
    assert (fields["swizzle"], fields["sbo"], fields["lbo"], fields["addr"]) == \
        ("128b", 1024, 16, 0)
    assert "const u32 cake_a = sa + (u32)s * 16384u + cake_wg * 8192u;" in src
    assert "(u32)!(k == 0));" in src  # init: scale-d 0 on the first K step only


def test_three_stage_ring_releases_each_stage_at_once():
    # With 3 stages a wgmma group kept in flight starves the producer: release at once.
    result = emit_text(RING4.replace("stage=4", "stage=3").replace("count=4", "count=3")
                       .replace("k % 4", "k % 3"))
    assert result.unit is not None, [d.message for d in result.comp.sink.diagnostics]
    src = result.unit.source
    assert re.search(r"lm.commit\(empty, stage=s\)\n\s*cake_wgmma_wait<0>\(\);\n\s*"
                     r"if \(cake_wg_leader\) cake_mbar_arrive\(empty \+ 8u \* s\);", src)
    assert "cake_wgmma_wait<1>" not in src


def test_gemm_four_stage_ring_keeps_one_group_in_flight(gemm):
    assert "cake_wgmma_wait<1>();" in gemm.source


RING4 = """\
@cake.schedule(target="sm_90a")
def ring4(lm, A: LM.tma2d, B: LM.tma2d, C: LM.tma2d, K: LM.i32):
    k_tiles = lm.max(lm.cdiv(K, 64), 1)
    pool = lm.smem(163840)
    sa = pool.view(offset=0, shape=(64, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    sb = pool.view(offset=32768, shape=(256, 64), dtype=lm.bf16, stage=4, swizzle=128b)
    load = lm.role(warps=[0])
    math = lm.role(warps=[4, 5, 6, 7])
    full = lm.barrier(count=4, prod=[load], cons=[math], init_count=2)
    empty = lm.barrier(count=4, prod=[math], cons=[load], init_count=1)
    acc = lm.regs(shape=(64, 256), dtype=lm.f32, role=math)
    with load:
        for k in lm.range(0, k_tiles):
            lm.wait(empty, stage=k % 4)
            sa.tma_load(A, coords=(lm.block_id(0), k), stage=k % 4, barrier=full)
            sb.tma_load(B, coords=(lm.block_id(1), k), stage=k % 4, barrier=full)
    with math:
        for k in lm.range(0, k_tiles):
            s = k % 4
            lm.wait(full, stage=s)
            lm.mma(acc, sa[s], sb[s], init=(k == 0))
            lm.commit(empty, stage=s)
        C.tma_store(acc.to(lm.bf16), coords=(lm.block_id(0), lm.block_id(1)))
"""


def test_four_stage_ring_keeps_one_wgmma_group_in_flight():
    result = emit_text(RING4)
    assert result.unit is not None, [d.message for d in result.comp.sink.diagnostics]
    src = result.unit.source
    assert "cake_wgmma_wait<1>();" in src
    assert "if (cake_wg_leader) cake_mbar_arrive(empty + 8u * empty_held);" in src
    # A wait on the stage still held releases it first (no wait blocks on its own release).
    assert "if (empty_held == (u32)s) {" in src
    assert "cake_setmaxnreg_" not in src.split("extern \"C\"")[1]  # no role asks for regs=


def test_gemm_epilogue_is_bounds_checked_per_warpgroup(gemm):
    src = gemm.source
    assert "const i32 cake_row = m_tile * 128 + (i32)cake_wg * 64;" in src
    assert "cake_store_packed_tile<256, CakeOutBf16>(C_tile, C, cake_row, cake_col);" in src


def test_gemm_whole_tiles_are_stored_under_the_next_tiles_wgmma(gemm):
    src = gemm.source
    part = ("cake_store_packed_part<256, 4, CakeOutBf16>(C_tile, C, C_tile_row, C_tile_col, "
            "C_tile_parts);")
    assert "u32 C_tile[64];" in src
    assert "if (cake_whole_tile<256, CakeOutBf16>(C, cake_row, cake_col)) {" in src
    assert f"cake_wgmma_commit();\n          if (C_tile_parts) {part}" in src
    # Pending parts are finished once the K loop issued its last group (before the packed
    # tile is rewritten), and after the last tile.
    assert src.count(f"while (C_tile_parts) {part}") == 2
    k_loop_end = src.index("cake_mbar_arrive(empty + 8u * empty_held);\n      }\n      while")
    assert k_loop_end < src.index("C.tma_store(acc.to(lm.bf16)")


def test_gemm_names_and_source_lines(gemm):
    src = gemm.source
    assert "// gemm_bf16.cake:56: lm.mma(acc, sa[s], sb[s], init=(k == 0))" in src
    for name in ("tiles_m", "k_tiles", "m_tile", "n_tile", "group", "rows"):
        assert re.search(rf"const i32 {name} = ", src), name


def test_gemm_metadata(gemm):
    meta = gemm.metadata
    assert meta["block"] == [384, 1, 1]
    assert meta["grid"] == ["min(cdiv(M, 128) * cdiv(N, 256), sm_count)", "1", "1"]
    assert [p["name"] for p in meta["params"]] == ["A", "B", "C", "M", "N", "K"]
    a, b, c = meta["params"][:3]
    assert a["tmaps"] == [{"box": [128, 64], "swizzle": "128b", "oob_fill": "zero",
                           "l2_promotion": "256b"}]
    assert b["tmaps"][0]["box"] == [256, 64]
    assert c["tmaps"] == []  # the epilogue stores directly: C may have any row stride
    assert meta["dynamic_smem"] >= 196608
    Metadata.parse(meta)  # what the runtime accepts


def test_gemm_signature_follows_the_metadata(gemm):
    sig = gemm.source[gemm.source.index("gemm_bf16(\n"):].split(") {", 1)[0]
    names = [line.split()[-1].rstrip(",") for line in sig.splitlines()[1:]]
    assert names == ["A_tmap0", "A", "B_tmap0", "B", "C", "M", "N", "K"]


def test_gemm_builds_with_nvrtc_without_spills(gemm):
    report = shared_builds.ptxas_report(gemm)  # leaves the cubin in NVRTC's cache
    assert "0 bytes spill stores, 0 bytes spill loads" in report
    cubin = api.binary(gemm, "cubin")
    assert cubin[:4] == b"\x7fELF"
    ptx = api.binary(gemm, "ptx").decode()
    for instr in ("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16",
                  "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
                  "mbarrier.try_wait.parity.shared::cta.b64", "setmaxnreg.inc.sync.aligned.u32",
                  "wgmma.wait_group.sync.aligned 0"):
        assert instr in ptx, instr


@pytest.mark.parametrize("name", ["gemm_bias_gelu", "gemm_fp8"])
def test_pingpong_epilogues_store_at_once_without_spills(name):
    """The ping-pong examples store each tile where the store stands (the other warpgroup's
    MMAs run meanwhile, nothing is deferred) and their 232-register consumers do not spill."""
    unit = shared_builds.unit(ROOT / "examples" / f"{name}.cake")
    src = unit.source
    assert "cake_setmaxnreg_inc<232>();" in src and "C_tile" not in src
    assert "cake_ring_mask<u32>(" in src  # each consumer skips the other's ring positions
    report = shared_builds.ptxas_report(unit)
    assert "0 bytes spill stores, 0 bytes spill loads" in report


@pytest.mark.parametrize("name", ["gemm_bias_gelu_cooperative", "gemm_fp8_cooperative"])
def test_fused_epilogues_are_deferred_and_build_without_spills(name):
    """The epilogue expression is packed into the deferred tile (written under the next
    tile's wgmma groups) and the math role's 240 registers hold it without spills: the
    emitter's register rule (LOOP_/EPILOGUE_RESERVED_REGS) against ptxas itself."""
    unit = shared_builds.unit(ROOT / "examples" / f"{name}.cake")
    src = unit.source
    assert "C_tile[cake_cp + cake_r] = CakeOutBf16::pack(cake_x[0], cake_x[1]);" in src
    assert "cake_block_store_pair<" not in src.split('extern "C"')[1]  # nothing stored at once
    report = shared_builds.ptxas_report(unit)
    assert "0 bytes spill stores, 0 bytes spill loads" in report


# ---- what is not lowered is a diagnostic --------------------------------------------------------


def test_other_targets_are_not_yet_supported(monkeypatch):
    from cakec.targets import codegen

    # every SKU has a backend now: take sm_100a's away
    monkeypatch.setattr(codegen, "backend_for", lambda target: None)
    result = api.emit(api.load(str(ROOT / "examples" / "seed_fragment.cake")), "sm_100a")
    assert result.unit is None
    diag = result.comp.sink.diagnostics[-1]
    assert diag.code == "CAKE-H100"
    assert "code generation for sm_100a is not yet supported" in diag.message


BROKEN = GEMM.read_text().replace("lm.wait(full, stage=s)", "lm.wait(fulll, stage=s)")


def test_input_that_fails_verification_is_not_emitted():
    result = emit_text(BROKEN)
    assert result.unit is None and codes(result) == ["CAKE-T001"]


def test_an_op_without_a_lowering_is_reported_at_its_line(monkeypatch):
    from dataclasses import replace

    from cakec.dialects.cake import CommitOp
    from cakec.targets import codegen

    real = codegen.backend_for

    def without_commit(target: str):
        backend = real(target)
        return replace(backend, lowerings={k: v for k, v in backend.lowerings.items()
                                           if k is not CommitOp})

    monkeypatch.setattr(codegen, "backend_for", without_commit)
    result = api.emit(api.load(str(GEMM)))
    assert result.unit is None
    (diag,) = result.comp.sink.diagnostics
    assert diag.code == "CAKE-H100" and diag.span.line == 57
    assert diag.message == "`lm.commit` is not yet supported for sm_90a code generation"


def test_missing_derived_attribute_is_an_internal_error():
    from cakec.dialects.cake import MmaOp
    from cakec.driver import verify_source
    from cakec.targets.codegen import emit_cuda

    comp = verify_source(api.load(str(GEMM)))
    mma = next(op for op in comp.module.walk() if isinstance(op, MmaOp))
    del mma.attributes["cake.a_desc"]
    assert emit_cuda(comp.module, comp.ctx, comp.sources) is None
    diag = comp.sink.diagnostics[-1]
    assert diag.code == "CAKE-I002" and "cake.a_desc" in diag.message


def test_arrival_counts_are_cross_checked():
    from xdsl.dialects.builtin import IntegerAttr, i64

    from cakec.dialects.cake import BarrierOp
    from cakec.driver import verify_source
    from cakec.targets.codegen import emit_cuda

    comp = verify_source(api.load(str(GEMM)))
    empty = next(op for op in comp.module.walk()
                 if isinstance(op, BarrierOp) and op.sym_name.data == "empty")
    empty.attributes["cake.arrivals"] = IntegerAttr(1, i64)
    assert emit_cuda(comp.module, comp.ctx, comp.sources) is None
    assert "initialised for 1 arrival(s) per phase" in comp.sink.diagnostics[-1].message


def test_cake_names_that_are_not_c_names_are_renamed():
    from cakec.targets.emit.emitter import _Names

    names = _Names()
    assert [names.fresh(n) for n in ("int", "cake_smem", "k", "k")] == \
        ["int_", "cake_smem_", "k", "k_1"]
    with names.scope():
        assert names.fresh("t") == "t"
    assert names.fresh("t") == "t"  # a sibling scope may reuse it


def test_compile_raises_with_the_diagnostics():
    with pytest.raises(api.CakeCompileError) as info:
        api.compile(source=BROKEN)
    assert [d.code for d in info.value.diagnostics] == ["CAKE-T001"]
    assert "undefined name `fulll` [CAKE-T001]" in str(info.value)


# ---- the CLI -----------------------------------------------------------------------------------


def test_cli_emit_metadata_and_mlir():
    r = cakec("emit", str(GEMM), "--emit", "metadata")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["kernel"] == "gemm_bf16"
    r = cakec("emit", str(GEMM), "--emit", "mlir")
    assert r.returncode == 0 and "cake.initial_parity" in r.stdout


def test_cli_emit_refuses_unverified_input(tmp_path):
    bad = tmp_path / "bad.cake"
    bad.write_text(BROKEN)
    r = cakec("emit", str(bad), "-o", str(tmp_path / "out.cu"))
    assert r.returncode == 1 and "[CAKE-T001]" in r.stderr
    assert not (tmp_path / "out.cu").exists()


def test_cli_run_without_an_example_module_is_a_usage_error(tmp_path):
    lonely = tmp_path / "lonely.cake"
    lonely.write_text(GEMM.read_text())
    r = cakec("run", str(lonely))
    assert r.returncode == 2 and "cakec: error:" in r.stderr


def test_run_shape_parsing():
    assert api.parse_shape("M=1, N=2", {"M": 8, "K": 4}) == {"M": 1, "N": 2, "K": 4}
    with pytest.raises(api.RunUsageError):
        api.parse_shape("M=x", {})


def test_run_summary_line():
    from cakec.feedback.report import RunReport
    from cakec.feedback.text import summary

    r = RunReport("k.cake", stage="done", kernel="gemm_bf16", target="sm_90a",
                  shape={"M": 8, "N": 8, "K": 8})
    r.numerics = {"tolerance": 5e-3, "correct": True, "seeds": [
        {"seed": 1, "correct": True, "rel_err": 1.5e-3, "unwritten": 0}]}
    r.timing = {"ms": {"cake": 0.5, "torch.matmul": 0.55}, "speedup": {"torch.matmul": 1.1},
                "watchdog_overhead": None}
    r.speed_of_light = {"flops": 1e9, "pct_roofline": 40.0, "bound": "compute"}
    assert summary(r) == (
        "gemm_bf16 sm_90a M=8 N=8 K=8 | correct on 1 seed(s): worst rel_err=1.50e-03 (tol 5e-03),"
        " unwritten=0 | cake 0.500 ms 2.0 TFLOP/s | torch.matmul 0.550 ms 1.8 TFLOP/s (cake "
        "1.10x) | 40% of the compute roofline")


def test_example_module_defines_the_run_contract():
    example = api.load_example(str(GEMM))
    assert example.outputs == ["C"] and "torch.matmul" in example.baselines
    assert example.shapes[0] == {"M": 8192, "N": 8192, "K": 8192}
    assert example.flops(example.shapes[0]) == 2.0 * 8192 ** 3


def test_a_refused_construct_does_not_cascade_into_an_internal_error():
    # Ungated (derive only), a wait on 65 mbarriers reaches the emitter: it is refused there
    # (CAKE-H100), and the wait lowering that finds no phase register for it is the
    # refusal's consequence, not a second, internal error (CAKE-I001 before the fix).
    from cakec.driver import build, run_passes
    from cakec.targets.codegen import emit_cuda

    text = (ROOT / "test/lit/conformance/waited_mbarriers.cake").read_text()
    comp = build(api.load(source=text))
    run_passes(comp, "derive")
    assert comp.ok
    assert emit_cuda(comp.module, comp.ctx, comp.sources) is None
    assert [d.code for d in comp.sink.diagnostics] == ["CAKE-H100"]
    assert comp.sink.diagnostics[0].message == (
        "waiting on a barrier of 65 mbarriers is not yet supported for sm_90a code generation")
