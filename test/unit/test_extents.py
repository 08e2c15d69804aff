"""Scalars tied to extents (targets/emit/extents.py, docs/abi.md): what the shipped kernels'
accesses bind and cap, that an ambiguous tiling binds nothing, and that the Python runtime
refuses a scalar that disagrees with its tensor, naming the parameter."""

from __future__ import annotations

from pathlib import Path

import pytest

from cakec import api
from cakec.runtime import CakeArgumentError
from cakec.runtime.args import Metadata, bind
from test_runtime import FakeTensor

ROOT = Path(__file__).resolve().parents[2]


def metadata(kernel: str) -> dict:
    """Launch metadata of a kernel given as a path or as .cake text."""
    result = api.emit(api.load(source=kernel) if "\n" in kernel else api.load(kernel))
    assert result.unit is not None, [d.message for d in result.comp.sink.diagnostics]
    return result.unit.metadata


def tied(meta: dict) -> dict[tuple[str, int], str]:
    """(tensor, dim) -> scalar, from shape_bindings and the tensors' `shape` together."""
    out = {(t, d): s for s, (t, d) in meta["shape_bindings"].items()}
    for p in meta["params"]:
        for d, s in enumerate(p.get("shape") or ()):
            if s is not None:
                out[(p["name"], d)] = s
    return out


def caps(meta: dict) -> dict[tuple[str, int], int]:
    return {(p["name"], d): e for p in meta["params"]
            for d, e in enumerate(p.get("max_shape") or ()) if e is not None}


GEMM_TIES = {("A", 0): "M", ("A", 1): "K", ("B", 0): "N", ("B", 1): "K", ("C", 0): "M",
             ("C", 1): "N"}
KMEANS_TIES = {("X", 0): "B", ("X", 1): "N", ("C", 0): "B", ("C", 1): "K", ("Csq", 0): "B",
               ("Csq", 1): "K", ("Idx", 0): "B", ("Idx", 1): "N", ("Dist", 0): "B",
               ("Dist", 1): "N"}


@pytest.mark.parametrize("name,ties,capped", [
    # persistent, tiles in a swizzled order through lm.min: the tile counts it reads stand in
    ("gemm_bf16", GEMM_TIES, {}),
    ("gemm_tcgen05", GEMM_TIES, {}),
    # block_id % tiles_m and block_id // tiles_m over a grid of tiles_m * tiles_n
    ("gemm_sm80", GEMM_TIES, {}),
    # t % tiles_m and t // tiles_m over tiles_m * B items; D is read at column 0 only
    ("kmeans_assign", KMEANS_TIES, {("X", 2): 128, ("C", 2): 128}),
    ("kmeans_assign_d64", KMEANS_TIES, {("X", 2): 64, ("C", 2): 64}),
    ("kmeans_assign_k32", KMEANS_TIES, {("X", 2): 128, ("C", 2): 128}),
    ("kmeans_assign_k32_d64", KMEANS_TIES, {("X", 2): 64, ("C", 2): 64}),
    ("kmeans_assign_k32_w4", KMEANS_TIES, {("X", 2): 128, ("C", 2): 128}),
    ("kmeans_assign_k32_d64_w4", KMEANS_TIES, {("X", 2): 64, ("C", 2): 64}),
    ("kmeans_assign_k32_d64_x2", KMEANS_TIES, {("X", 2): 64, ("C", 2): 64}),
    # split-K over tile-major units (u // parts): only M, through tiles_m, is bound
    ("gemm_bf16_splitk_n128", {("A", 0): "M", ("C", 0): "M"}, {}),
    # centroid tiles counted as 2 * cdiv(K, 256): not a cdiv(K, 128), so K stays unbound
    ("kmeans_assign_sm100", {k: v for k, v in KMEANS_TIES.items() if v != "K"},
     {("X", 2): 128, ("C", 2): 128}),
    ("kmeans_csq", {("C", 0): "B", ("C", 1): "K", ("Csq", 0): "B", ("Csq", 1): "K"},
     {("C", 2): 128}),
])
def test_shipped_kernels_bind_their_extents(name, ties, capped):
    path = ROOT / "examples" / f"{name}.cake"
    meta = metadata(str(path if path.exists() else ROOT / "cakec" / "kernels" / f"{name}.cake"))
    assert tied(meta) == ties
    assert caps(meta) == capped
    Metadata.parse(meta)  # what the runtime accepts
    # each scalar is in shape_bindings once, at its first tensor in parameter order
    firsts = list(meta["shape_bindings"].items())
    assert len({s for s, _ in firsts}) == len(firsts)


SQUARE = """\
@cake.schedule(target="sm_90a")
def square(lm, A: LM.tma2d, M: LM.i32, N: LM.i32):
    lm.grid(lm.cdiv(M, 128) * lm.cdiv(N, 128))
    pool = lm.smem(32768)
    sa = pool.view(offset=0, shape=(128, 128), dtype=lm.bf16, swizzle=128b)
    load = lm.role(warps=[0])
    full = lm.barrier(count=1, prod=[load], cons=[load])
    with load:
        t = lm.block_id(0)
        sa.tma_load(A, coords=({row}, {col}), barrier=full)
        lm.wait(full)
"""


def test_ambiguous_tilings_bind_nothing():
    """Both scalars tile by 128: a coordinate computed from both binds neither, one whose
    range is known binds its own."""
    meta = metadata(SQUARE.format(row="t % lm.cdiv(M, 128)", col="t // lm.cdiv(M, 128)"))
    assert tied(meta) == {("A", 0): "M", ("A", 1): "N"}
    meta = metadata(SQUARE.format(row="(t + 1) % lm.cdiv(M, 128)", col="(t * 3) // 7"))
    assert tied(meta) == {("A", 0): "M"}  # (t * 3) // 7 reads both M and N


def test_runtime_refuses_a_scalar_that_disagrees_with_its_tensor():
    meta = Metadata.parse(metadata(str(ROOT / "examples" / "gemm_bf16.cake")))
    M, N, K = 256, 512, 64

    def args(**over):
        a = {"A": FakeTensor((M, K)), "B": FakeTensor((N, K), ptr=0x20000),
             "C": FakeTensor((M, N), ptr=0x30000), "M": M, "N": N, "K": K, **over}
        return [a[k] for k in "ABCMNK"]

    bind(meta, args())
    with pytest.raises(CakeArgumentError, match=r"'M' = 257 but A.shape\[0\] = 256"):
        bind(meta, args(M=M + 1))
    with pytest.raises(CakeArgumentError, match=r"'K' = 56 but A.shape\[1\] = 64"):
        bind(meta, args(K=K - 8))
    with pytest.raises(CakeArgumentError, match=r"'B' has shape \[512, 72\]; dim 1 must be K"):
        bind(meta, args(B=FakeTensor((N, 72), ptr=0x20000)))
    with pytest.raises(CakeArgumentError, match=r"'C' has shape \[256, 511\]; dim 1 must be N"):
        bind(meta, args(C=FakeTensor((M, N - 1), ptr=0x30000)))


def test_runtime_refuses_an_extent_past_the_kernels_tiles():
    meta = Metadata.parse(metadata(str(ROOT / "examples" / "kmeans_assign.cake")))
    B, N, K = 2, 300, 100

    def args(d):
        f32 = "torch.float32"
        return [FakeTensor((B, N, d)), FakeTensor((B, K, d), ptr=0x20000),
                FakeTensor((B, K), dtype=f32, ptr=0x30000),
                FakeTensor((B, N), dtype="torch.int32", ptr=0x40000),
                FakeTensor((B, N), dtype=f32, ptr=0x50000), B, N, K]

    bind(meta, args(128))
    with pytest.raises(CakeArgumentError, match=r"'X' has shape \[2, 300, 136\]; dim 2 must be "
                                                r"at most 128"):
        bind(meta, args(136))


def test_max_shape_is_validated():
    meta = metadata(str(ROOT / "examples" / "kmeans_csq.cake"))
    meta["params"][0]["max_shape"] = [None, 0, None]
    with pytest.raises(ValueError, match="max_shape"):
        Metadata.parse(meta)


@pytest.mark.parametrize("name,ties", [
    # a persistent loop over (query tile, head, batch), longest first when causal, in rounds
    # of alternating direction: u = (...) % tiles; mt = u % tiles_m or tiles_m − 1 − u // heads,
    # b = (hb) // H with hb = u // tiles_m or u % heads (`a if causal == 1 else b`)
    ("fmha_fwd_sm90", {("Q", 0): "B", ("Q", 1): "Sq", ("K", 0): "B", ("V", 0): "B",
                       ("Lse", 1): "Sq"}),
    # the same index, persistent at every S, O copied out of a staged view by TMA
    ("fmha_fwd_sm90_overlap", {("Q", 0): "B", ("Q", 1): "Sq", ("K", 0): "B", ("V", 0): "B",
                               ("Lse", 1): "Sq"}),
    ("fmha_fwd_sm90_xt", {("Q", 0): "B", ("Q", 1): "Sq", ("K", 0): "B", ("V", 0): "B",
                          ("Lse", 1): "Sq"}),
    # two 64-row query halves at rows 2 mt and 2 mt + 1 cover 2 cdiv(S_q, 128) tiles of 64,
    # not cdiv(S_q, 64): S_q stays unbound
    ("fmha_fwd_sm90_d64", {("Q", 0): "B", ("K", 0): "B", ("V", 0): "B"}),
    # the same halves, O copied out of a staged view per warpgroup by TMA
    ("fmha_fwd_sm90_d64_overlap", {("Q", 0): "B", ("K", 0): "B", ("V", 0): "B"}),
    # a head-major order, causal in (long, short) pairs: mt = tiles_m − 1 − r // 2 or r // 2
    # for r = u % tiles_m (`x // 2` stays below x's bound)
    ("fmha_fwd_sm90_overlap_lazy_hm", {("Q", 0): "B", ("Q", 1): "Sq", ("K", 0): "B",
                                       ("V", 0): "B", ("Lse", 1): "Sq"}),
    ("fmha_fwd_sm90_d64_lazy_hm", {("Q", 0): "B", ("K", 0): "B", ("V", 0): "B"}),
])
def test_persistent_attention_binds_batch_and_query_length(name, ties):
    meta = metadata(str(ROOT / "examples" / "attention" / f"{name}.cake"))
    assert tied(meta) == ties
    Metadata.parse(meta)


def test_a_batch_index_stacked_on_the_tiles_binds_no_scalar():
    # examples/attention: O is [B·S_q', H·D] with whole 128-row tiles per batch, stored at row
    # tile b * tiles_m + mt; that covers B · cdiv(S_q, 128) tiles, so S_q is not O's extent
    # (binding it refused every padded O on the H200). Q's own dimension still binds S_q.
    # (The Blackwell form keeps that one-CTA-per-tile grid; the sm_90a ones loop over tiles.)
    meta = metadata(str(ROOT / "examples" / "attention" / "fmha_fwd_sm100.cake"))
    assert "O" not in {t for t, _ in meta["shape_bindings"].values()}
    assert meta["shape_bindings"]["Sq"] == ["Q", 1]
