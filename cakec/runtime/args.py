"""Kernel metadata (the ABI contract the emitter writes; see docs/abi.md) and the host-side
argument checks run before every launch.

Pure Python: tensors are duck-typed (dtype, shape, stride(), data_ptr(), device), so the
checks run, and are tested, without torch or a GPU. Every bad input becomes a
CakeArgumentError naming the parameter, never a CUDA fault.
"""

from __future__ import annotations

import operator
import struct
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from cakec.runtime import expr
from cakec.targets.sku import SWIZZLE_SPAN  # one table of swizzle spans (no heavy imports)


class CakeArgumentError(ValueError):
    """An argument does not satisfy the kernel's parameter contract."""


@dataclass(frozen=True)
class DType:
    name: str          # .cake spelling
    torch_name: str    # str(torch dtype)
    itemsize: int
    tma: int | None    # CUtensorMapDataType value; None: no tensor map for this type


# CUtensorMapDataType: UINT8=0, UINT16=1, UINT32=2, INT32=3, UINT64=4, INT64=5,
# FLOAT16=6, FLOAT32=7, FLOAT64=8, BFLOAT16=9 (fp8 and int8 ride as raw bytes).
TENSOR_DTYPES: dict[str, DType] = {d.name: d for d in (
    DType("bf16", "torch.bfloat16", 2, 9),
    DType("f16", "torch.float16", 2, 6),
    DType("f32", "torch.float32", 4, 7),
    # tf32 MMA operands are f32 in memory; the tensor core reads the top 19 bits of each.
    DType("tf32", "torch.float32", 4, 7),
    DType("f64", "torch.float64", 8, 8),
    DType("e4m3", "torch.float8_e4m3fn", 1, 0),
    DType("e5m2", "torch.float8_e5m2", 1, 0),
    DType("i8", "torch.int8", 1, 0),
    DType("u8", "torch.uint8", 1, 0),
    DType("i16", "torch.int16", 2, 1),
    DType("i32", "torch.int32", 4, 3),
    DType("u32", "torch.uint32", 4, 2),
    DType("i64", "torch.int64", 8, 5),
)}
# Scalar kernel parameters: struct format, and the integer range (None for floats).
#: The dtype of a tensor parameter the kernel never reads or writes (nothing to infer it
#: from): any tensor is accepted, and no tensor map is built for it.
ANY_DTYPE = "any"

SCALAR_DTYPES: dict[str, tuple[str, tuple[int, int] | None]] = {
    "i32": ("<i", (-2**31, 2**31 - 1)),
    "u32": ("<I", (0, 2**32 - 1)),
    "i64": ("<q", (-2**63, 2**63 - 1)),
    "u64": ("<Q", (0, 2**64 - 1)),
    "f32": ("<f", None),
    "f64": ("<d", None),
}
# cuda.h's CUtensorMap enum value for each spelling the metadata may use: the Python runtime
# and the C launcher generator (targets/launcher.py) both encode tensor maps from these.
TMAP_SWIZZLE = {"none": 0, "32b": 1, "64b": 2, "128b": 3}
TMAP_L2_PROMOTION = {"none": 0, "64b": 1, "128b": 2, "256b": 3}
TMAP_OOB_FILL = {"zero": 0, "nan": 1}
OOB_FILL = tuple(TMAP_OOB_FILL)
L2_PROMOTION = tuple(TMAP_L2_PROMOTION)
# Device facts a grid expression may read besides scalars: the SM count, and how many
# clusters (CTAs, for cluster-less kernels) of this kernel can be resident at once.
GRID_NAMES = ("sm_count", "max_clusters")


@dataclass(frozen=True)
class TmapSpec:
    box: tuple[int, ...]      # numpy order (outermost first), padded with 1s to the rank
    swizzle: str
    oob_fill: str
    l2_promotion: str


@dataclass(frozen=True)
class Param:
    name: str
    kind: str                               # "tensor" | "scalar"
    dtype: str
    rank: int = 0
    tmaps: tuple[TmapSpec, ...] = ()
    shape: tuple[int | str | None, ...] | None = None   # per dim: literal, scalar name, any
    max_shape: tuple[int | None, ...] | None = None     # per dim: the largest extent, or any


@dataclass(frozen=True)
class Metadata:
    kernel: str
    entry: str
    target: str
    block: tuple[int, int, int]
    grid: tuple[str, str, str]
    cluster: tuple[int, int, int]   # compiled in with __cluster_dims__; the grid must divide
    dynamic_smem: int
    params: tuple[Param, ...]
    shape_bindings: Mapping[str, tuple[str, int]]
    constraints: tuple[str, ...]

    @staticmethod
    def parse(raw: Mapping[str, Any]) -> "Metadata":
        """Validate the emitter's JSON dict; malformed metadata is a ValueError up front."""
        return _parse_metadata(raw)


def _fail(msg: str) -> None:
    raise ValueError(f"invalid kernel metadata: {msg}")


def _parse_tmap(pname: str, rank: int, dtype: DType, raw: Mapping[str, Any]) -> TmapSpec:
    box = tuple(int(b) for b in raw.get("box", ()))
    if not 1 <= len(box) <= rank or not all(1 <= b <= 256 for b in box):
        _fail(f"{pname}: tmap box {list(box)} needs 1..{rank} entries in [1, 256]")
    box = (1,) * (rank - len(box)) + box
    swizzle = raw.get("swizzle", "none")
    if swizzle not in SWIZZLE_SPAN:
        _fail(f"{pname}: swizzle {swizzle!r} not one of {list(SWIZZLE_SPAN)}")
    inner = box[-1] * dtype.itemsize
    if inner % 16:
        _fail(f"{pname}: tmap inner box {inner} B is not a multiple of 16 B")
    if swizzle != "none" and inner > SWIZZLE_SPAN[swizzle]:
        _fail(f"{pname}: inner box {inner} B exceeds the {swizzle} swizzle span")
    oob = raw.get("oob_fill", "zero")
    l2 = raw.get("l2_promotion", "256b")
    if oob not in OOB_FILL or l2 not in L2_PROMOTION:
        _fail(f"{pname}: oob_fill {oob!r} / l2_promotion {l2!r} unknown")
    return TmapSpec(box, swizzle, oob, l2)


def _parse_param(raw: Mapping[str, Any]) -> Param:
    name, kind, dtype = raw.get("name"), raw.get("kind"), raw.get("dtype")
    if not isinstance(name, str) or not name.isidentifier():
        _fail(f"parameter name {name!r}")
    if kind == "scalar":
        if dtype not in SCALAR_DTYPES:
            _fail(f"{name}: scalar dtype {dtype!r} not one of {list(SCALAR_DTYPES)}")
        return Param(name, kind, dtype)
    if kind != "tensor":
        _fail(f"{name}: kind {kind!r} is neither 'tensor' nor 'scalar'")
    if dtype not in TENSOR_DTYPES and not (dtype == ANY_DTYPE and not raw.get("tmaps")):
        _fail(f"{name}: tensor dtype {dtype!r} not one of {list(TENSOR_DTYPES)}")
    rank = raw.get("rank")
    if not isinstance(rank, int) or not 1 <= rank <= 5:
        _fail(f"{name}: rank {rank!r} must be an int in [1, 5]")
    tmaps = tuple(_parse_tmap(name, rank, TENSOR_DTYPES[dtype], t) for t in raw.get("tmaps", ()))
    shape = raw.get("shape")
    if shape is not None:
        if len(shape) != rank or not all(s is None or isinstance(s, (int, str)) for s in shape):
            _fail(f"{name}: shape {shape!r} needs {rank} entries of int, scalar name or null")
        shape = tuple(shape)
    max_shape = raw.get("max_shape")
    if max_shape is not None:
        if len(max_shape) != rank or not all(
                s is None or (type(s) is int and s >= 1) for s in max_shape):
            _fail(f"{name}: max_shape {max_shape!r} needs {rank} entries of int >= 1 or null")
        max_shape = tuple(max_shape)
    return Param(name, kind, dtype, rank, tmaps, shape, max_shape)


def _parse_metadata(raw: Mapping[str, Any]) -> Metadata:
    for key in ("kernel", "entry", "target", "block", "grid", "params"):
        if key not in raw:
            _fail(f"missing {key!r}")
    params = tuple(_parse_param(p) for p in raw["params"])
    by_name = {p.name: p for p in params}
    if len(by_name) != len(params):
        _fail("duplicate parameter names")
    scalars = {p.name for p in params if p.kind == "scalar"}
    block = tuple(int(b) for b in raw["block"])
    grid = tuple(str(g) for g in raw["grid"])
    if len(block) != 3 or len(grid) != 3 or min(block) < 1 or block[0] * block[1] * block[2] > 1024:
        _fail(f"block {list(block)} / grid {list(grid)} must have 3 entries, <= 1024 threads")
    cluster = tuple(int(c) for c in raw.get("cluster", (1, 1, 1)))
    if len(cluster) != 3 or min(cluster) < 1 or cluster[0] * cluster[1] * cluster[2] > 16:
        _fail(f"cluster {list(cluster)} must have 3 entries >= 1, at most 16 CTAs")
    constraints = tuple(str(c) for c in raw.get("constraints", ()))
    for text in (*grid, *constraints):
        try:
            unknown = expr.names(text) - scalars - set(GRID_NAMES)
        except expr.ExprError as e:
            _fail(str(e))
        if unknown:
            _fail(f"{text!r} reads {sorted(unknown)}, which are not scalar parameters")
    bindings: dict[str, tuple[str, int]] = {}
    for scalar, (tensor, dim) in raw.get("shape_bindings", {}).items():
        p = by_name.get(tensor)
        if scalar not in scalars or p is None or p.kind != "tensor" or not 0 <= dim < p.rank:
            _fail(f"shape_bindings {scalar!r}: [{tensor!r}, {dim}] is not a scalar bound to "
                  "a dimension of a tensor parameter")
        bindings[scalar] = (tensor, int(dim))
    for p in params:
        for s in p.shape or ():
            if isinstance(s, str) and s not in scalars:
                _fail(f"{p.name}: shape entry {s!r} is not a scalar parameter")
    smem = int(raw.get("dynamic_smem", 0))
    if smem < 0:
        _fail("dynamic_smem < 0")
    return Metadata(str(raw["kernel"]), str(raw["entry"]), str(raw["target"]), block, grid,
                    cluster, smem, params, bindings, constraints)


@dataclass
class BoundTensor:
    param: Param
    value: Any                 # the tensor-like object
    shape: tuple[int, ...]
    stride: tuple[int, ...]    # elements
    ptr: int
    device: int


def _tensor_facts(meta: Metadata, p: Param, t: Any) -> BoundTensor:
    where = f"{meta.kernel}: argument {p.name!r}"
    if not hasattr(t, "data_ptr") or not hasattr(t, "stride"):
        raise CakeArgumentError(f"{where}: expected a tensor, got {type(t).__name__}")
    dev = t.device
    if getattr(dev, "type", None) != "cuda":
        raise CakeArgumentError(f"{where}: tensor is on {dev}, not on a CUDA device")
    dt = TENSOR_DTYPES.get(p.dtype)
    if dt is not None and str(t.dtype) != dt.torch_name:
        raise CakeArgumentError(f"{where}: expected dtype {p.dtype} ({dt.torch_name}), "
                                f"got {t.dtype}")
    shape = tuple(int(s) for s in t.shape)
    if len(shape) != p.rank:
        raise CakeArgumentError(f"{where}: expected rank {p.rank}, got shape {list(shape)}")
    stride = tuple(int(s) for s in t.stride())
    if shape[-1] != 1 and stride[-1] != 1:
        raise CakeArgumentError(f"{where}: innermost stride is {stride[-1]}, must be 1 "
                                "(pass a contiguous tensor, e.g. .contiguous())")
    ptr = int(t.data_ptr())
    if p.tmaps:  # cuTensorMapEncodeTiled's rules, checked here so the driver never sees them
        if ptr % 16:
            raise CakeArgumentError(f"{where}: data pointer {ptr:#x} is not 16-byte aligned "
                                    "(TMA needs it; a sliced view may be misaligned)")
        for d in range(p.rank - 1):
            nbytes = stride[d] * dt.itemsize
            if nbytes % 16 or not 0 < nbytes < 2**40:
                raise CakeArgumentError(
                    f"{where}: stride of dim {d} is {nbytes} bytes; TMA needs a positive "
                    f"multiple of 16 (shape {list(shape)}, strides {list(stride)} elements)")
        if not all(1 <= s <= 2**32 for s in shape):
            raise CakeArgumentError(f"{where}: shape {list(shape)} has a dimension outside "
                                    "[1, 2^32], which a tensor map cannot describe")
    return BoundTensor(p, t, shape, stride, ptr, int(dev.index or 0))


def _scalar_value(meta: Metadata, p: Param, v: Any) -> int | float:
    where = f"{meta.kernel}: argument {p.name!r}"
    fmt, bounds = SCALAR_DTYPES[p.dtype]
    if bounds is None:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise CakeArgumentError(f"{where}: expected a {p.dtype} number, got {type(v).__name__}")
        return float(v)
    if isinstance(v, bool):
        raise CakeArgumentError(f"{where}: expected an {p.dtype} integer, got bool")
    try:
        iv = operator.index(v)
    except TypeError:
        raise CakeArgumentError(f"{where}: expected an {p.dtype} integer, "
                                f"got {type(v).__name__}") from None
    if not bounds[0] <= iv <= bounds[1]:
        raise CakeArgumentError(f"{where}: {iv} is out of range for {p.dtype}")
    return iv


@dataclass
class BoundArgs:
    tensors: dict[str, BoundTensor]
    scalars: dict[str, int | float]
    device: int


def bind(meta: Metadata, args: Sequence[Any]) -> BoundArgs:
    """Check `args` against the metadata; raise CakeArgumentError naming the parameter."""
    if len(args) != len(meta.params):
        names = ", ".join(p.name for p in meta.params)
        raise CakeArgumentError(f"{meta.kernel}() takes {len(meta.params)} arguments "
                                f"({names}), got {len(args)}")
    tensors: dict[str, BoundTensor] = {}
    scalars: dict[str, int | float] = {}
    for p, a in zip(meta.params, args):
        if p.kind == "tensor":
            tensors[p.name] = _tensor_facts(meta, p, a)
        else:
            scalars[p.name] = _scalar_value(meta, p, a)
    devices = {b.device for b in tensors.values()}
    if len(devices) > 1:
        where = ", ".join(f"{n} on cuda:{b.device}" for n, b in tensors.items())
        raise CakeArgumentError(f"{meta.kernel}: tensors are on different devices ({where})")
    for s, (tname, dim) in meta.shape_bindings.items():
        actual = tensors[tname].shape[dim]
        if scalars[s] != actual:
            raise CakeArgumentError(f"{meta.kernel}: argument {s!r} = {scalars[s]} but "
                                    f"{tname}.shape[{dim}] = {actual} (they must agree)")
    for tname, b in tensors.items():
        for d, want in enumerate(b.param.shape or ()):
            expected = scalars[want] if isinstance(want, str) else want
            if expected is not None and b.shape[d] != expected:
                label = f"{want} = {expected}" if isinstance(want, str) else str(expected)
                raise CakeArgumentError(f"{meta.kernel}: argument {tname!r} has shape "
                                        f"{list(b.shape)}; dim {d} must be {label}")
        for d, most in enumerate(b.param.max_shape or ()):
            if most is not None and b.shape[d] > most:
                raise CakeArgumentError(f"{meta.kernel}: argument {tname!r} has shape "
                                        f"{list(b.shape)}; dim {d} must be at most {most} "
                                        "(the kernel covers no more)")
    for c in meta.constraints:
        try:
            ok = expr.evaluate(c, scalars)
        except expr.ExprError as e:
            raise CakeArgumentError(f"{meta.kernel}: {e}") from None
        if not ok:
            vals = ", ".join(f"{n} = {scalars[n]}" for n in sorted(expr.names(c)))
            raise CakeArgumentError(f"{meta.kernel}: constraint {c!r} violated ({vals})")
    return BoundArgs(tensors, scalars, devices.pop() if devices else 0)


def launch_grid(meta: Metadata, scalars: Mapping[str, int | float],
                device: Mapping[str, int]) -> tuple[int, int, int]:
    """Evaluate the grid with the scalars and the GRID_NAMES facts in `device`; an empty,
    oversized or cluster-misaligned grid is an argument error, not a launch fault."""
    env = {**scalars, **device}
    try:
        grid = tuple(expr.evaluate(g, env) for g in meta.grid)
    except expr.ExprError as e:
        raise CakeArgumentError(f"{meta.kernel}: grid: {e}") from None
    limits = (2**31 - 1, 65535, 65535)
    if any(not 1 <= g <= lim for g, lim in zip(grid, limits)):
        raise CakeArgumentError(f"{meta.kernel}: grid {list(meta.grid)} evaluates to "
                                f"{list(grid)} for these arguments (each must be >= 1: "
                                "empty problem, or too large)")
    if any(g % c for g, c in zip(grid, meta.cluster)):
        raise CakeArgumentError(f"{meta.kernel}: grid {list(grid)} is not a multiple of the "
                                f"cluster shape {list(meta.cluster)}")
    return grid  # type: ignore[return-value]


def pack_tensor(b: BoundTensor) -> bytes:
    """CakeTensor<R> by value: void* ptr; long long shape[R]; long long stride[R]."""
    return struct.pack(f"<Q{2 * len(b.shape)}q", b.ptr, *b.shape, *b.stride)


def pack_scalar(p: Param, v: int | float) -> bytes:
    return struct.pack(SCALAR_DTYPES[p.dtype][0], v)
