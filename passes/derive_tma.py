"""derive-tma: what each TMA copy moves and the tensor maps the runtime must encode.

The author writes tile coordinates (numpy order); a copy's box is the tile shape padded with
leading 1s to the tensor's rank and its element coordinates are tile coordinate × tile
extent per dimension, printed innermost first as PTX takes them. A view stored as several
128B-swizzled column blocks (`cake.atoms` > 1) is loaded with one box per block: the box's
inner extent is the block width and copy j starts `j * cake.copy_step` elements further in.
A TMA store of a staged view (`T.tma_store(view[s], ...)`) is cut into boxes as a load of
the view is; a register tile's `tma_store` keeps one unswizzled box (lowered as st.global).

Tensor maps are shared per (tensor, box, swizzle); `cake.tmap` indexes the tensor's list in
the kernel's `cake.tmaps`. Needs derive-smem's view attributes; copies whose box cannot be
formed (a view of higher rank than its tensor) get nothing: the consistency gate reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from xdsl.context import Context
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, i64
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from cakec.dialects.cake import (
    KernelOp, StageOp, TensorType, TmaLoadOp, TmaStoreOp, TmaStoreStageOp, ViewOp, dtype_bytes,
    dtype_name,
)
from cakec.interned import i64_array, integer_attr, string_attr
from cakec.passes.derive_common import (
    get_int, get_str, kernels, scaled, set_int, set_ints, set_strs, walk,
)

#: Fixed tensor-map parameters (runtime TmapSpec / cuTensorMapEncodeTiled): dense boxes and
#: the runtime's default L2 promotion. Out of bounds a load reads zeros (tails need no
#: masking) or, where the load says fill=lm.nan, NaN: one tensor map per fill.
TMAP_INTERLEAVE, TMAP_L2_PROMOTION = "none", "256b"


@dataclass(frozen=True)
class Copy:
    """One TMA operation as the hardware sees it."""

    tensor: str
    dtype: str
    rank: int
    box: tuple[int, ...]  # one copy's box, numpy order
    swizzle: str
    copies: int
    tile: tuple[int, ...]  # the whole tile (box padded, before the atom split), numpy order
    tx_bytes: int
    fill: str = "zero"  # what a load reads outside the tensor: "zero" or "nan"


@dataclass(frozen=True)
class DeriveTma(ModulePass):
    """Annotates TMA loads and stores (`cake.box`, `cake.copies`, `cake.copy_step`,
    `cake.tx_bytes`, `cake.coords`, `cake.tmap`) and kernels (`cake.tmaps`)."""

    name = "derive-tma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in kernels(op):
            _TensorMaps(kernel).run()


class _TensorMaps:
    def __init__(self, kernel: KernelOp):
        self.kernel = kernel
        self.maps: dict[str, list[tuple[tuple[int, ...], str, str]]] = {}
        self.specs: list[Attribute] = []

    def run(self) -> None:
        for op in walk(self.kernel):
            copy = (_load(self.kernel, op.tensor, op.view.owner, op.fill)
                    if isinstance(op, TmaLoadOp) else
                    _load(self.kernel, op.tensor, _view(op.source), None)
                    if isinstance(op, TmaStoreStageOp) else
                    _store(self.kernel, op) if isinstance(op, TmaStoreOp) else None)
            if copy is not None:
                self._annotate(op, copy)
        self.kernel.attributes["cake.tmaps"] = ArrayAttr(self.specs)

    def _annotate(self, op: Operation, copy: Copy) -> None:
        coords = [scaled(c, extent) for c, extent in zip(op.coords, copy.tile)]
        set_ints(op, "cake.box", copy.box)
        set_int(op, "cake.copies", copy.copies)
        set_int(op, "cake.copy_step", copy.box[-1] if copy.copies > 1 else 0)
        set_int(op, "cake.tx_bytes", copy.tx_bytes)
        set_strs(op, "cake.coords", coords[::-1])
        set_int(op, "cake.tmap", self._tmap(copy))

    def _tmap(self, copy: Copy) -> int:
        maps = self.maps.setdefault(copy.tensor, [])
        key = (copy.box, copy.swizzle, copy.fill)
        if key not in maps:
            maps.append(key)
            self.specs.append(_tmap_spec(copy.tensor, len(maps) - 1, copy.dtype, copy.rank,
                                         copy.box, copy.swizzle, copy.fill))
        return maps.index(key)


@lru_cache(maxsize=1024)
def _tmap_spec(tensor: str, index: int, dtype: str, rank: int, box: tuple[int, ...],
               swizzle: str, fill: str) -> DictionaryAttr:
    """One entry of `cake.tmaps` (docs/ir.md), one instance per value (cakec/interned.py)."""
    return DictionaryAttr({
        "tensor": string_attr(tensor), "index": integer_attr(index, i64),
        "dtype": string_attr(dtype), "rank": integer_attr(rank, i64), "box": i64_array(box),
        "swizzle": string_attr(swizzle), "interleave": string_attr(TMAP_INTERLEAVE),
        "oob_fill": string_attr(fill), "l2_promotion": string_attr(TMAP_L2_PROMOTION),
    })


def _tensor(kernel: KernelOp, value: SSAValue) -> tuple[str, TensorType] | None:
    if not (isinstance(value, BlockArgument) and isinstance(value.type, TensorType)):
        return None
    names = kernel.param_names.data
    name = names[value.index].data if value.index < len(names) else f"arg{value.index}"
    return name, value.type


def _padded(shape: tuple[int, ...], rank: int) -> tuple[int, ...] | None:
    return (1,) * (rank - len(shape)) + shape if len(shape) <= rank else None


def _view(stage: SSAValue) -> Operation | None:
    return stage.owner.view.owner if isinstance(stage.owner, StageOp) else None


def _load(kernel: KernelOp, tensor_value: SSAValue, view: Operation | None,
          fill_attr: StringAttr | None) -> Copy | None:
    """A copy between a view's stage and a tensor (a TMA load, or a TMA store of a staged
    tile): the view's layout decides the boxes (one per swizzle column block)."""
    tensor = _tensor(kernel, tensor_value)
    if tensor is None or not isinstance(view, ViewOp):
        return None
    name, tt = tensor
    swizzle, atoms = get_str(view, "cake.swizzle"), get_int(view, "cake.atoms")
    stage_bytes = get_int(view, "cake.stage_bytes")
    tile = _padded(view.result.type.dims(), len(tt.dims()))
    if tile is None or swizzle is None or atoms is None or stage_bytes is None:
        return None
    box = tile[:-1] + (tile[-1] // atoms,)
    elem = view.result.type.element_type
    dtype = dtype_name(tt.element_type if _is_dtype(tt.element_type) else elem)
    fill = fill_attr.data if fill_attr is not None else "zero"
    return Copy(name, dtype, len(tile), box, swizzle, atoms, tile, stage_bytes, fill)


def _store(kernel: KernelOp, op: TmaStoreOp) -> Copy | None:
    tensor = _tensor(kernel, op.tensor)
    if tensor is None or not _is_dtype(op.value.type.element_type):
        return None
    name, tt = tensor
    tile = _padded(op.value.type.dims(), len(tt.dims()))
    if tile is None:
        return None
    dtype = dtype_name(op.value.type.element_type)
    return Copy(name, dtype, len(tile), tile, "none", 1, tile, op.value.type.num_bytes())


def _is_dtype(attr: Attribute) -> bool:
    try:
        dtype_bytes(attr)
    except KeyError:
        return False
    return True
