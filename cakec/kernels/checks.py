"""Input checks shared by the public kernel entries: every bad input is a CakeArgumentError
naming the entry and the argument, before anything launches."""

from __future__ import annotations

from typing import Any

from cakec.runtime import CakeArgumentError

#: Compute capability -> the target the shipped kernels are built for there.
TARGETS = {(9, 0): "sm_90a"}
_targets: dict[int, str] = {}


def tensor(entry: str, name: str, t: Any, *, dtype: Any, ranks: tuple[int, ...],
           device: Any = None, tma: bool = False) -> None:
    """`t` is a CUDA tensor of `dtype` and one of `ranks`, on `device` when given, with unit
    innermost stride; `tma`: also a 16-byte aligned base and outer strides (checked only
    outside torch.compile tracing, where pointers exist; the runtime checks them again)."""
    import torch

    where = f"{entry}: {name}"
    if not isinstance(t, torch.Tensor):
        raise CakeArgumentError(f"{where} must be a torch.Tensor, got {type(t).__name__}")
    if t.device.type != "cuda":
        raise CakeArgumentError(f"{where} is on {t.device}; it must be on a CUDA device")
    if device is not None and t.device != device:
        raise CakeArgumentError(f"{where} is on {t.device}, the other inputs on {device}")
    if t.dtype != dtype:
        raise CakeArgumentError(f"{where} has dtype {t.dtype}; expected {dtype}")
    if t.dim() not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise CakeArgumentError(f"{where} has shape {list(t.shape)}; expected rank {want}")
    if t.dim() and t.shape[-1] != 1 and t.stride(-1) != 1:
        raise CakeArgumentError(f"{where} is not contiguous along its last dimension (strides "
                                f"{list(t.stride())}); pass {name}.contiguous()")
    if tma and t.numel() and not torch.compiler.is_compiling():  # empty: nothing launches
        size = t.element_size()
        if t.data_ptr() % 16 or any(t.stride(d) * size % 16 for d in range(t.dim() - 1)):
            raise CakeArgumentError(
                f"{where} needs a 16-byte aligned start and rows a multiple of 16 bytes apart "
                f"(shape {list(t.shape)}, strides {list(t.stride())}, {size}-byte elements); "
                f"pad its last dimension to a multiple of {16 // size}")


def same(entry: str, what: str, a: int, b: int) -> None:
    if a != b:
        raise CakeArgumentError(f"{entry}: {what} disagree ({a} vs {b})")


def target(entry: str, t: Any) -> str:
    """The target the shipped kernels use on `t`'s device (a clear error elsewhere)."""
    index = t.device.index or 0
    found = _targets.get(index)
    if found is None:
        import torch

        cc = torch.cuda.get_device_capability(index)
        if cc not in TARGETS:
            raise CakeArgumentError(f"{entry}: no shipped kernel runs on cuda:{index} "
                                    f"(sm_{cc[0]}{cc[1]}); built for "
                                    + ", ".join(f"sm_{a}{b}" for a, b in TARGETS))
        found = _targets[index] = TARGETS[cc]
    return found
