"""Launch metadata for an emitted kernel: the JSON contract of docs/abi.md that
`cakec.runtime.Kernel` parses.

It says how to launch the kernel (entry, block, grid expressions over scalar parameters
and device facts, dynamic SMEM) and what each parameter is: its kind, dtype, rank, and the
tensor maps the runtime encodes from the tensor before the launch. The parameter order
here is the kernel signature's order (targets/emit/emitter.py renders it from `params`):
per tensor, its maps (`const __grid_constant__ CakeTensorMap`) then the tensor itself
(`const CakeTensor<R>`); per scalar, the value.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr, DenseArrayBase, DictionaryAttr, IntegerAttr, NoneType, StringAttr,
)
from xdsl.ir import Attribute, BlockArgument, SSAValue

from cakec.dialects.cake import GridOp, KernelOp, SmCountOp, TensorType, dtype_name
from cakec.targets.cluster import cluster_shape
from cakec.targets.emit.extents import extents

#: Integer ops a grid expression may use, as the runtime's expression language spells them.
_INFIX = {arith.AddiOp: ("+", 1), arith.SubiOp: ("-", 1), arith.MuliOp: ("*", 2),
          arith.FloorDivSIOp: ("//", 2), arith.RemSIOp: ("%", 2)}
_CALLS = {arith.CeilDivSIOp: "cdiv", arith.MinSIOp: "min", arith.MaxSIOp: "max"}


@dataclass(frozen=True)
class TensorMap:
    """One tensor-map kernel parameter: `{tensor}_tmap{index}` in the signature."""

    tensor: str
    index: int
    spec: dict[str, object]  # box (numpy order), swizzle, oob_fill, l2_promotion

    @property
    def param(self) -> str:
        return f"{self.tensor}_tmap{self.index}"


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "tensor" | "scalar"
    dtype: str
    rank: int = 0
    tmaps: tuple[TensorMap, ...] = ()


class GridError(ValueError):
    """A grid dimension depends on something the host cannot evaluate before the launch."""


def tensor_maps(kernel: KernelOp) -> dict[tuple[str, int], TensorMap]:
    """derive-tma's `cake.tmaps`, keyed by (tensor, index)."""
    specs = kernel.attributes.get("cake.tmaps")
    out: dict[tuple[str, int], TensorMap] = {}
    if not isinstance(specs, ArrayAttr):
        return out
    for spec in specs.data:
        if not isinstance(spec, DictionaryAttr):
            continue
        fields = {k: _plain(v) for k, v in spec.data.items()}
        key = (str(fields["tensor"]), int(fields["index"]))  # type: ignore[arg-type]
        out[key] = TensorMap(key[0], key[1], {
            "box": list(fields["box"]),  # type: ignore[call-overload]
            "swizzle": fields["swizzle"], "oob_fill": fields.get("oob_fill", "zero"),
            "l2_promotion": fields.get("l2_promotion", "256b")})
    return out


def _plain(attr: Attribute) -> object:
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    return str(attr)


def params(kernel: KernelOp, used_tmaps: set[tuple[str, int]],
           tmaps: dict[tuple[str, int], TensorMap]) -> list[Param]:
    """The kernel's parameters in signature order; a tensor carries the maps the lowered
    code reads (`used_tmaps`), in index order."""
    out: list[Param] = []
    for name_attr, arg in zip(kernel.param_names.data, kernel.body.block.args):
        name = name_attr.data
        t = arg.type
        if isinstance(t, TensorType):
            maps = tuple(tmaps[k] for k in sorted(used_tmaps) if k[0] == name)
            out.append(Param(name, "tensor", _tensor_dtype(t), len(t.dims()), maps))
        else:
            out.append(Param(name, "scalar", dtype_name(t)))
    return out


def grid(kernel: KernelOp) -> list[str]:
    """`lm.grid(...)` as three host expressions (missing dimensions are 1); raises GridError
    naming what the host cannot evaluate."""
    ops = [op for op in kernel.body.block.ops if isinstance(op, GridOp)]
    dims = [host_expr(kernel, d) for d in ops[0].dims] if ops else []
    dims += ["1"] * (3 - len(dims))
    # A cluster launch needs whole clusters: a runtime dimension is rounded up to a multiple
    # of the cluster's (constant ones must divide already: verify-conformance, CAKE-H025).
    shape = cluster_shape(kernel) or (1, 1, 1)
    return [d if c == 1 or d.isdigit() else f"cdiv({d}, {c}) * {c}"
            for d, c in zip(dims, shape)]


def host_expr(kernel: KernelOp, value: SSAValue, prec: int = 0) -> str:
    """An i32 value as an expression over scalar parameter names and `sm_count`, with the
    parentheses Python precedence needs."""
    owner = value.owner
    if isinstance(value, BlockArgument):
        if value.owner is kernel.body.block and not isinstance(value.type, TensorType):
            return kernel.param_names.data[value.index].data
        raise GridError("a loop variable")
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return str(owner.value.value.data)
    if isinstance(owner, SmCountOp):
        return "sm_count"
    if type(owner) in _INFIX:
        op, p = _INFIX[type(owner)]
        text = (f"{host_expr(kernel, owner.operands[0], p)} {op} "
                f"{host_expr(kernel, owner.operands[1], p + 1)}")
        return f"({text})" if p < prec else text
    if type(owner) in _CALLS:
        args = ", ".join(host_expr(kernel, o) for o in owner.operands)
        return f"{_CALLS[type(owner)]}({args})"
    raise GridError(f"`{owner.name}`")


def metadata(kernel: KernelOp, *, target: str, block_threads: int, dynamic_smem: int,
             grid_dims: list[str], param_list: list[Param]) -> dict[str, object]:
    """The JSON document for one kernel (docs/abi.md)."""
    ext = extents(kernel)
    first = {tuple(at) for at in ext.shape_bindings().values()}
    shape = cluster_shape(kernel)
    return {
        "kernel": kernel.sym_name.data,
        "entry": kernel.sym_name.data,
        "target": target,
        "block": [block_threads, 1, 1],
        "grid": grid_dims,
        # The cluster shape is compiled into the kernel (`__cluster_dims__`, PTX
        # .reqnctapercluster), so a plain cuLaunchKernel launches whole clusters.
        **({"cluster": list(shape)} if shape else {}),
        "dynamic_smem": dynamic_smem,
        "params": [_param_json(p, {d: s for (t, d), s in ext.bound.items()
                                   if t == p.name and (t, d) not in first},
                               {d: e for (t, d), e in ext.limit.items() if t == p.name})
                   for p in param_list],
        "shape_bindings": ext.shape_bindings(),
        # TMA's divisibility needs fall on byte strides and the base pointer, which the
        # launchers check per tensor (a padded row stride makes any extent legal), so no
        # scalar constraint is derived from them.
        "constraints": [],
    }


def _param_json(p: Param, shape: dict[int, str], max_shape: dict[int, int]) -> dict[str, object]:
    """`shape` and `max_shape` per dimension: the extents a scalar must equal beyond its
    shape_bindings entry, and the caps the kernel's tiles set (targets/emit/extents.py)."""
    if p.kind == "scalar":
        return {"name": p.name, "kind": "scalar", "dtype": p.dtype}
    out: dict[str, object] = {"name": p.name, "kind": "tensor", "rank": p.rank,
                              "dtype": p.dtype, "tmaps": [m.spec for m in p.tmaps]}
    if shape:
        out["shape"] = [shape.get(d) for d in range(p.rank)]
    if max_shape:
        out["max_shape"] = [max_shape.get(d) for d in range(p.rank)]
    return out


def _tensor_dtype(t: TensorType) -> str:
    """The dtype the frontend inferred from the tensor's loads and stores; `any` when the
    kernel never touches the tensor (the canonical example's `O`)."""
    from cakec.runtime.args import ANY_DTYPE

    return ANY_DTYPE if isinstance(t.element_type, NoneType) else dtype_name(t.element_type)
