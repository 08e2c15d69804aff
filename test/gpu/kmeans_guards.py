"""Guarded idx/dist buffers for the k-means assignment GPU tests: the outputs are windows of
larger buffers whose border catches a kernel writing outside them (one place for the layout
of the guard and its checks)."""

from __future__ import annotations

from typing import Any


def guarded_outputs(torch: Any, b: int, n: int) -> tuple[Any, Any, Any, Any]:
    """(ibuf, dbuf, idx, dist): idx and dist are the [b, n] windows of the guarded buffers."""
    ibuf = torch.full((b + 2, n + 8), -7, device="cuda", dtype=torch.int32)
    dbuf = torch.full((b + 2, n + 8), float("nan"), device="cuda", dtype=torch.float32)
    return ibuf, dbuf, ibuf[1:b + 1, 4:n + 4], dbuf[1:b + 1, 4:n + 4]


def assert_written_inside(torch: Any, ibuf: Any, dbuf: Any, b: int, n: int) -> None:
    """Every row of the dist window written, nothing written on the guard border."""
    assert int(torch.isnan(dbuf[1:b + 1, 4:n + 4]).sum()) == 0, \
        "some rows of dist were never written"
    guard_i, guard_d = ibuf.clone(), dbuf.clone()
    guard_i[1:b + 1, 4:n + 4] = -7
    guard_d[1:b + 1, 4:n + 4] = float("nan")
    assert int((guard_i != -7).sum()) == 0, "the kernel wrote outside idx"
    assert int((~torch.isnan(guard_d)).sum()) == 0, "the kernel wrote outside dist"
