"""Register-tile vocabulary without a GPU: broadcasting rules, the k-means example module's
`cakec run` contract, and the running argmin's algorithm (per-thread strict `<` in the
wgmma fragment layout, then the quad merge) replayed on numpy against np.argmin, ties
included, with the index formulas the sm_90a lowering emits."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np  # the [test] extra installs it: a missing numpy fails, never skips
import pytest

from cakec import api
from cakec.frontend.tile_exprs import broadcast
from cakec.runtime import CakeArgumentError
from cakec.runtime.args import Metadata, bind

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("a,b,out", [
    ((128, 128), (1, 128), (128, 128)),
    ((128, 1), (128, 128), (128, 128)),
    ((128, 1), (1, 64), (128, 64)),
    ((128, 1), (128, 1), (128, 1)),
    ((128, 128), (64, 1), None),
    ((128, 128), (1, 64), None),
    ((128,), (128, 1), None),
])
def test_broadcast_follows_numpy(a, b, out):
    assert broadcast(a, b) == out


def test_kmeans_example_defines_the_run_contract():
    example = api.load_example(str(ROOT / "examples" / "kmeans_assign.cake"))
    assert example.outputs == ["Dist"] and "torch naive" in example.baselines
    assert example.shapes[0] == {"B": 32, "N": 65536, "K": 1024, "D": 128}
    assert example.flops(example.shapes[0]) == 2.0 * 32 * 65536 * 1024 * 128
    assert any(s["N"] % 128 and s["K"] % 128 for s in example.shapes)  # a ragged shape


def _fake_tensor(shape: tuple[int, ...], stride: tuple[int, ...], dtype: str) -> SimpleNamespace:
    """Just enough of a CUDA torch tensor for cakec.runtime.args.bind."""
    return SimpleNamespace(shape=shape, dtype=f"torch.{dtype}", data_ptr=lambda: 1 << 40,
                           stride=lambda: stride, device=SimpleNamespace(type="cuda", index=0))


@pytest.mark.parametrize("name", ["kmeans_assign", "kmeans_assign_sm100"])
def test_kmeans_kernels_bind_the_csq_buffer(name):
    """Both assignment kernels read ||c||² by TMA: they take csq_buffer's [B, K] view, whose
    rows are padded to 16 bytes, and refuse a ragged K without the padding."""
    meta = Metadata.parse(api.emit(api.load(str(ROOT / "examples" / f"{name}.cake"))).unit.metadata)
    b, n, k, d = 3, 1000, 301, 72

    def args(csq_stride: int) -> list:
        return [_fake_tensor((b, n, d), (n * d, d, 1), "bfloat16"),
                _fake_tensor((b, k, d), (k * d, d, 1), "bfloat16"),
                _fake_tensor((b, k), (csq_stride, 1), "float32"),
                _fake_tensor((b, n), (n, 1), "int32"), _fake_tensor((b, n), (n, 1), "float32"),
                b, n, k]

    bind(meta, args((k + 3) // 4 * 4))  # kmeans_assign.csq_buffer's row stride
    with pytest.raises(CakeArgumentError, match="'Csq': stride of dim 0 is 1204 bytes"):
        bind(meta, args(k))


def _thread_argmin(scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """What one 64-row fragment's threads compute: per (warp w, lane l), rows 16w + l/4 + 8h,
    columns 8j + 2(l%4) + e, scanned j-major, e-minor, tile by tile with a strict `<`, then
    two xor-shuffle merges of (value, index) within each quad."""
    rows, k = scores.shape
    best = np.full((4, 32, 2), np.inf)
    index = np.zeros((4, 32, 2), dtype=np.int64)
    for base in range(0, k, n):
        for w in range(4):
            for lane in range(32):
                for j in range(n // 8):
                    for e in range(2):
                        for h in range(2):
                            r = 16 * w + lane // 4 + 8 * h
                            col = base + 8 * j + 2 * (lane % 4) + e
                            s = scores[r, col] if col < k else np.inf  # the c_sq fill
                            if s < best[w, lane, h]:
                                best[w, lane, h], index[w, lane, h] = s, col
    for m in (1, 2):
        other_b, other_i = best[:, np.arange(32) ^ m].copy(), index[:, np.arange(32) ^ m].copy()
        take = (other_b < best) | ((other_b == best) & (other_i < index))
        best, index = np.where(take, other_b, best), np.where(take, other_i, index)
    out_b, out_i = np.empty(rows), np.empty(rows, dtype=np.int64)
    for w in range(4):
        for lane in range(32):
            for h in range(2):
                r = 16 * w + lane // 4 + 8 * h
                out_b[r], out_i[r] = best[w, lane, h], index[w, lane, h]
    return out_b, out_i


@pytest.mark.parametrize("k", [1, 5, 128, 300])
def test_running_argmin_takes_the_lowest_index_among_equal_minima(k):
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 4, size=(64, k)).astype(np.float64)  # many exact ties
    best, index = _thread_argmin(scores, 128)
    assert np.array_equal(index, scores.argmin(1))  # np.argmin: first occurrence
    assert np.array_equal(best, scores.min(1))
