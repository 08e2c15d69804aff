"""Speed of light: the kernel's FLOPs and bytes against this GPU's tensor-core peak (the SKU
table's rate x SMs x clock) and its copy bandwidth measured here (a device-to-device copy),
so a report says how far from the roofline a kernel is, and flags one faster than physics."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

_COPY_BYTES = 1 << 30


@lru_cache(maxsize=1)
def copy_bandwidth_gbps() -> float:
    """Device-to-device copy of 1 GiB: read + write bytes over the median time."""
    import torch

    from cakec.api import time_ms

    src = torch.empty(_COPY_BYTES, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms({"copy": lambda: dst.copy_(src)}, rounds=3, budget_ms=30.0)["copy"]
    return 2 * _COPY_BYTES / (ms * 1e-3) / 1e9


#: Dense tensor-core rate per operand dtype relative to bf16 (f32 accumulation), the same
#: on every generation the SKU table has a rate for: fp8 and int8 twice, tf32 half.
_DTYPE_RATE = {"bf16": 1.0, "f16": 1.0, "tf32": 0.5, "e4m3": 2.0, "e5m2": 2.0, "i8": 2.0}


def mma_dtypes(module: Any) -> set[str]:
    """The operand dtypes of the kernel's `lm.mma`s (B is always a shared-memory stage)."""
    from cakec.dialects import cake

    return {cake.dtype_name(op.b.type.element_type) for op in module.walk()
            if op.name == "cake.mma"}


def tensor_peak_tflops(arch: str, sm_count: int, clock_khz: int,
                       dtypes: set[str] = frozenset()) -> float | None:
    """The GPU's dense tensor peak for the fastest of `dtypes` (bf16 when none): the roofline
    is then a floor no correct kernel runs under. `arch` is what the cubin was built for,
    so a portable kernel gets the peak of the GPU it runs on."""
    from cakec.targets.sku import SKUS

    sku = SKUS.get(arch) or next((s for s in SKUS.values() if s.name.startswith(arch)), None)
    rate = sku.tensor_flops_per_sm_clock if sku else 0
    scale = max((_DTYPE_RATE.get(d, 1.0) for d in dtypes), default=1.0)
    return rate * scale * sm_count * clock_khz * 1e3 / 1e12 if rate else None


def tensor_bytes(inputs: list[Any]) -> int:
    """Every tensor argument read or written once: the traffic floor when the .py does not
    define `bytes(shape)`."""
    return sum(t.numel() * t.element_size() for t in inputs if hasattr(t, "element_size"))


def speed_of_light(flops: float | None, nbytes: int, bytes_source: str, ms: float,
                   peak_tflops: float | None, copy_gbps: float) -> dict[str, Any]:
    compute_ms = flops / (peak_tflops * 1e12) * 1e3 if flops and peak_tflops else None
    memory_ms = nbytes / (copy_gbps * 1e9) * 1e3 if copy_gbps else None
    bound = max(x for x in (compute_ms, memory_ms, 0.0) if x is not None)
    return {
        "flops": flops, "bytes": nbytes, "bytes_source": bytes_source,
        "peak_tflops": peak_tflops, "copy_gbps": copy_gbps,
        "achieved_tflops": flops / (ms * 1e-3) / 1e12 if flops else None,
        "achieved_gbps": nbytes / (ms * 1e-3) / 1e9,
        "pct_tensor_peak": 100 * flops / (ms * 1e-3) / (peak_tflops * 1e12)
        if flops and peak_tflops else None,
        "pct_copy_bandwidth": 100 * nbytes / (ms * 1e-3) / (copy_gbps * 1e9) if copy_gbps
        else None,
        "roofline_ms": bound or None,
        "pct_roofline": 100 * bound / ms if bound else None,
        "bound": None if not bound else ("compute" if bound == compute_ms else "memory"),
        # Faster than the roofline means the measurement (or the check) is broken.
        "suspicious": bool(bound) and ms < 0.95 * bound,
    }
