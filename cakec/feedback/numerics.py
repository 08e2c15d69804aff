"""Numerics of one launch: the kernel's (NaN-poisoned) outputs against the reference."""

from __future__ import annotations

import math
from typing import Any


def poison(outputs: list[Any]) -> None:
    """NaN into every output, so an element the kernel never writes cannot pass."""
    for out in outputs:
        out.fill_(float("nan"))


def compare(out: Any, ref: Any, tolerance: float) -> dict[str, Any]:
    """rel_err (relative Frobenius norm: the pass criterion), max_abs_err and its index
    (NaN or unwritten elements count as infinitely wrong), max_rel_err (the largest error
    over the reference's largest magnitude), unwritten (poison left in the output)."""
    import torch

    o, r = out.double(), ref.double()
    unwritten = int(torch.isnan(o).sum())
    diff = (o - r).abs()
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, math.inf), diff)
    worst = int(diff.argmax()) if diff.numel() else 0
    index = [int(i) for i in torch.unravel_index(torch.tensor(worst), tuple(o.shape))] \
        if diff.numel() else []
    max_abs = float(diff.max()) if diff.numel() else 0.0
    scale = float(r.abs().nan_to_num(0.0).max()) if r.numel() else 0.0
    if unwritten or math.isinf(max_abs):
        rel = math.nan
    else:
        norm = float(r.norm())
        rel = float((o - r).norm() / norm) if norm else float((o - r).norm())
    return {
        "rel_err": _finite(rel), "max_abs_err": _finite(max_abs),
        "max_rel_err": _finite(max_abs / scale) if scale else _finite(max_abs),
        "worst_index": index,
        "worst": {"got": _finite(float(o.flatten()[worst])) if o.numel() else None,
                  "want": _finite(float(r.flatten()[worst])) if r.numel() else None},
        "unwritten": unwritten, "elements": o.numel(),
        "correct": unwritten == 0 and not math.isnan(rel) and rel <= tolerance,
    }


def _finite(x: float) -> float | None:
    """JSON has no NaN or infinity: null stands for them."""
    return x if math.isfinite(x) else None
