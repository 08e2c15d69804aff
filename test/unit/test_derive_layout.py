"""derive-smem, derive-tmem, derive-tma and the inspect ledger: layout rules, diagnostics
instead of exceptions, and the ledger's view of derive-barriers' attributes."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from xdsl.dialects.builtin import StringAttr

from cakec.driver import Compilation, build, read_source, run_passes
from cakec.dialects.cake import BarrierOp, KernelOp, TmaLoadOp, ViewOp, WaitOp
from cakec.ledger import ledger, ledger_json
from cakec.passes.derive_common import get_int, get_ints, get_str, get_strs, set_int, set_ints
from cakec.targets.sku import SWIZZLE_SMEM_ALIGN, SWIZZLE_SPAN

DERIVE = "derive-smem,derive-tmem,derive-tma,derive-descriptors"


def kernel(view: str, *, pool: int = 65536, tmem: str = "cols=0, width=128",
           acc_cols: int = 128, target: str = "sm_100a", consumers: bool = True) -> str:
    """One view `sa` (declared by `view`, the arguments of pool.view) in a load/MMA ring."""
    uses = """
    with load:
        for k in lm.range(0, n):
            sa.tma_load(A, coords=(m_tile, k), stage=k % 2, barrier=full)
    with mma:
        for k in lm.range(0, n):
            lm.wait(full, stage=k % 2)
            lm.mma(acc, sa[k % 2], sa[k % 2], init=(k == 0))
""" if consumers else ""
    return f"""@cake.schedule(target="{target}")
def k(lm, A: LM.tma2d, n: LM.i32):
    m_tile = lm.block_id(0)
    pool = lm.smem({pool})
    sa = pool.view({view})
    acc = lm.tmem({tmem}, shape=(128, {acc_cols}), dtype=lm.f32)
    load = lm.role(warps=[0])
    mma = lm.role(warps=[2, 3])
    full = lm.barrier(count=2, prod=[load], cons=[mma], init_count=1)
{uses}"""


def derive(source: str, pipeline: str = DERIVE) -> Compilation:
    comp = build(read_source("t.cake", source))
    assert comp.ok, [d.message for d in comp.sink.diagnostics]
    run_passes(comp, pipeline)
    return comp


def only(comp: Compilation, cls: type):
    return next(op for op in comp.module.walk() if isinstance(op, cls))


def codes(comp: Compilation) -> list[str]:
    return [d.code for d in comp.sink.diagnostics]


# ---- swizzle and alignment -------------------------------------------------------------------


@pytest.mark.parametrize("shape,dtype,swizzle,atoms", [
    ("(128, 64)", "bf16", "128b", 1),  # 128-B rows
    ("(128, 128)", "bf16", "128b", 2),  # 256-B rows: two 128B column blocks
    ("(128, 32)", "bf16", "64b", 1),
    ("(128, 16)", "bf16", "32b", 1),
    ("(128, 8)", "bf16", "none", 1),  # 16-B rows: no span divides them
    ("(128, 96)", "bf16", "64b", 3),  # 192-B rows: 64 divides, 128 does not
    ("(128, 128)", "e4m3", "128b", 1),
    ("(128, 32)", "tf32", "128b", 1),
])
def test_auto_swizzle_is_widest_dividing_span(shape: str, dtype: str, swizzle: str,
                                              atoms: int) -> None:
    comp = derive(kernel(f"offset=0, shape={shape}, dtype=lm.{dtype}, stage=2"),
                  "derive-smem")
    view = only(comp, ViewOp)
    assert (get_str(view, "cake.swizzle"), get_int(view, "cake.atoms")) == (swizzle, atoms)
    assert get_str(view, "cake.swizzle_reason").startswith(f"auto: {swizzle} for the TMA load")


def test_auto_swizzle_without_consumers_is_none() -> None:
    comp = derive(kernel("offset=16, shape=(128, 64), dtype=lm.bf16", consumers=False),
                  "derive-smem")
    view = only(comp, ViewOp)
    assert get_str(view, "cake.swizzle") == "none" and get_int(view, "cake.align") == 16
    assert "no TMA load or MMA" in get_str(view, "cake.swizzle_reason")
    odd = derive(kernel("offset=8, shape=(128, 64), dtype=lm.bf16", consumers=False))
    assert codes(odd) == ["CAKE-S051"]


def test_auto_swizzle_narrows_to_fit_the_offset() -> None:
    comp = derive(kernel("offset=256, shape=(128, 64), dtype=lm.bf16, stage=2",
                         pool=33024), "derive-smem")
    view = only(comp, ViewOp)
    assert get_str(view, "cake.swizzle") == "32b" and get_int(view, "cake.atoms") == 4
    assert get_str(view, "cake.swizzle_reason").endswith(
        "128b would need an offset aligned to 1024 B, not 256")
    assert comp.ok


@pytest.mark.parametrize("view,code", [
    ("offset=0, shape=(128, 64), dtype=lm.bf16, stage=5", "CAKE-S050"),
    ("offset=512, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=128b", "CAKE-S051"),
    ("offset=256, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=64b", "CAKE-S051"),
    ("offset=64, shape=(128, 64), dtype=lm.bf16, stage=2, swizzle=None", "CAKE-S051"),
    ("offset=8, shape=(128, 64), dtype=lm.bf16, stage=2", "CAKE-S051"),
    ("offset=0, shape=(4, 64), dtype=lm.bf16, stage=2, swizzle=128b", "CAKE-S052"),
    ("offset=0, shape=(128, 16), dtype=lm.bf16, stage=2, swizzle=64b", "CAKE-S053"),
    ("offset=0, shape=(4, 128), dtype=lm.bf16, stage=2, swizzle=128b", "CAKE-S054"),
])
def test_layout_errors_are_diagnostics_at_the_view(view: str, code: str) -> None:
    comp = derive(kernel(view))
    assert codes(comp) == [code]
    diag = comp.sink.diagnostics[0]
    assert (diag.span.line, diag.span.col) == (5, 10)  # `sa = pool.view(...)`
    assert "`sa`" in diag.message


@given(rows=st.sampled_from([1, 4, 8, 64, 128, 256]), inner=st.sampled_from([8, 16, 32, 48,
       64, 96, 128, 256]), stages=st.integers(1, 4), offset=st.integers(0, 4096),
       tag=st.sampled_from(["", ", swizzle=None", ", swizzle=32b", ", swizzle=64b",
                            ", swizzle=128b"]),
       target=st.sampled_from(["sm_80", "sm_90a", "sm_100a", "sm_120a"]))
@settings(max_examples=150, deadline=None)
def test_any_view_gets_a_valid_layout_or_a_layout_error(rows: int, inner: int, stages: int,
                                                        offset: int, tag: str,
                                                        target: str) -> None:
    src = kernel(f"offset={offset}, shape=({rows}, {inner}), dtype=lm.bf16, stage={stages}{tag}",
                 pool=offset + 40000, target=target)
    comp = derive(src)
    assert all(c.startswith("CAKE-S05") for c in codes(comp)), comp.sink.diagnostics
    view = only(comp, ViewOp)
    if comp.ok:
        swz, align = get_str(view, "cake.swizzle"), get_int(view, "cake.align")
        stage_bytes = get_int(view, "cake.stage_bytes")
        assert align in (16, *SWIZZLE_SMEM_ALIGN.values())
        assert get_int(view, "cake.offset") % align == 0
        assert stages == 1 or stage_bytes % align == 0
        assert swz == "none" or (inner * 2) % SWIZZLE_SPAN[swz] == 0
        assert get_int(view, "cake.atoms") * get_int(view, "cake.atom_bytes") == stage_bytes


# ---- pools, block ----------------------------------------------------------------------------


def test_pools_are_1024_aligned_and_stores_need_no_scratch() -> None:
    comp = derive("""@cake.schedule(target="sm_90a")
def k(lm, C: LM.tma2d):
    p0 = lm.smem(1000)
    p1 = lm.smem(2048)
    math = lm.role(warps=[4, 5, 6, 7])
    acc = lm.regs(shape=(128, 64), dtype=lm.f32, role=math)
    with math:
        C.tma_store(acc.to(lm.bf16), coords=(0, 1))
""")
    bases = [get_int(op, "cake.base") for op in comp.module.walk() if op.name == "cake.smem"]
    assert bases == [0, 1024]
    store = next(op for op in comp.module.walk() if op.name == "cake.tma_store")
    assert "cake.scratch_offset" not in store.attributes  # stored from registers
    k = only(comp, KernelOp)
    assert get_int(k, "cake.dynamic_smem") == 1024 + 2048
    assert get_int(k, "cake.block_threads") == 256
    assert get_strs(store, "cake.coords") == ["64", "0"]
    assert get_ints(store, "cake.box") == [128, 64]


# ---- TMEM ------------------------------------------------------------------------------------


@pytest.mark.parametrize("cols,width,alloc", [
    (0, 1, 32), (0, 32, 32), (0, 33, 64), (0, 128, 128), (100, 100, 256), (384, 128, 512),
])
def test_tmem_allocation_is_next_power_of_two(cols: int, width: int, alloc: int) -> None:
    comp = derive(kernel("offset=0, shape=(128, 64), dtype=lm.bf16, stage=2",
                         tmem=f"cols={cols}, width={width}", acc_cols=width),
                  "derive-smem,derive-tmem")
    k = only(comp, KernelOp)
    assert get_int(k, "cake.tmem_alloc") == alloc
    assert get_int(k, "cake.tmem_warp") == 2  # the first warp of the MMA role


@pytest.mark.parametrize("tmem,code", [
    ("cols=448, width=128", "CAKE-H050"),
    ("cols=0, width=1024", "CAKE-H050"),
    ("cols=0, width=64", "CAKE-H051"),
])
def test_tmem_errors(tmem: str, code: str) -> None:
    comp = derive(kernel("offset=0, shape=(128, 64), dtype=lm.bf16, stage=2", tmem=tmem))
    assert codes(comp) == [code]
    assert comp.sink.diagnostics[0].span.line == 6


# ---- TMA -------------------------------------------------------------------------------------


def test_runtime_trip_counts_are_not_unrolled() -> None:
    comp = derive(kernel("offset=0, shape=(128, 128), dtype=lm.bf16, stage=2",
                         pool=65536).replace("lm.range(0, n)", "lm.range(0, n * 1000000)"))
    load = only(comp, TmaLoadOp)
    assert get_strs(load, "cake.coords") == ["k*128", "m_tile*128"]
    assert get_ints(load, "cake.box") == [128, 64]
    assert (get_int(load, "cake.copies"), get_int(load, "cake.copy_step")) == (2, 64)
    assert get_int(load, "cake.tx_bytes") == 128 * 128 * 2


# ---- ledger ----------------------------------------------------------------------------------


def test_ledger_reads_barrier_attributes_when_present() -> None:
    comp = derive(kernel("offset=0, shape=(128, 64), dtype=lm.bf16, stage=2"))
    assert ledger(comp.module)["barriers"] == [] and ledger(comp.module)["waits"] == []
    # What derive-barriers writes (docs/ir.md), set by hand here.
    bar, wait = only(comp, BarrierOp), only(comp, WaitOp)
    set_int(bar, "cake.smem_offset", 0)
    set_int(bar, "cake.arrivals", 1)
    set_int(bar, "cake.tx_bytes", 16384)
    set_ints(wait, "cake.parity", [0, 0, 1, 1])
    set_int(wait, "cake.initial_parity", 0)
    out = ledger(comp.module)
    assert out["barriers"] == [{
        "name": "full", "line": 9, "count": 2, "smem_offset": 0, "arrivals_per_phase": 1,
        "tx_bytes_per_phase": 16384, "producers": ["load"], "consumers": ["mma"]}]
    assert out["waits"] == [{"line": 16, "role": "mma", "barrier": "full", "stage": "k%2",
                             "parity": [0, 0, 1, 1], "initial_parity": 0}]
    wait.attributes["cake.parity"] = StringAttr("(k//2)&1")
    assert ledger(comp.module)["waits"][0]["parity"] == "(k//2)&1"


def test_ledger_json_round_trips_and_keeps_the_issue_keys() -> None:
    comp = derive(read_source("examples/seed_fragment.cake").text)
    out = json.loads(ledger_json(comp.module))
    assert list(out)[:9] == ["kernel", "target", "block", "smem", "tmem", "barriers", "tma",
                             "waits", "arrivals"]
    assert {"descriptors", "tensor_maps"} <= set(out)
    view = out["smem"]["views"][0]
    assert {k: view[k] for k in ("name", "offset", "stage_bytes", "stages", "swizzle",
                                 "align")} == {
        "name": "smem_q", "offset": 0, "stage_bytes": 32768, "stages": 3, "swizzle": "128b",
        "align": 1024}


def test_derived_ir_round_trips_through_mlir_text() -> None:
    from cakec.ir_text import print_module

    comp = derive(read_source("examples/ring_pipeline.cake").text)
    text = print_module(comp.module, locations=True)
    again = build(read_source("t.mlir", text))
    assert again.ok, [d.message for d in again.sink.diagnostics]
    assert ledger(again.module) == ledger(comp.module)
