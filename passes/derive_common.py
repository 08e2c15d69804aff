"""Helpers the derive-smem/tmem/tma/descriptors passes and the `cakec inspect` ledger share:
walking kernels and roles, reading and writing `cake.*` attributes, the target a kernel
compiles for, and printing index values as expressions of the author's .cake names.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr, DenseArrayBase, FileLineColLoc, IntegerAttr, IntegerType, ModuleOp, StringAttr,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from cakec.dialects.cake import (
    BarrierOp, BlockIdOp, DimOp, IfOp, KernelOp, NumBlocksOp, OnRoleOp, RoleOp, SkipOp,
    SmCountOp, WaitOp,
)
from cakec.interned import i64_array, integer_attr, string_array, string_attr
from cakec.targets.sku import MAX_WAITED_MBARRIERS

U64 = (1 << 64) - 1


def kernels(module: ModuleOp) -> list[KernelOp]:
    return [op for op in module.ops if isinstance(op, KernelOp)]


def walk(op: Operation) -> tuple[Operation, ...]:
    """`op.walk()` as a tuple, in the same order (pre-order: an op, then the ops of its
    regions), by following the ops' links: xDSL's walk is a generator per op, region and
    block, and the passes walk every kernel about twenty times per verify. Inside
    `shared_walks()` (a pass pipeline's run) an op's walk is made once and given again."""
    walks: dict[int, tuple[Operation, tuple[Operation, ...]]] | None = getattr(
        _shared, "walks", None)
    if walks is not None:
        got = walks.get(id(op))
        if got is not None and got[0] is op:
            return got[1]
    out = [op]
    for region in op.regions:
        block = region.first_block
        while block is not None:
            _walk_into(block, out)
            block = block.next_block
    ops = tuple(out)
    if walks is not None:
        walks[id(op)] = (op, ops)  # the op is kept: its id names no other op meanwhile
    return ops


def block_ops(block: Block) -> list[Operation]:
    """`list(block.ops)` by the ops' links: `list()` of xDSL's `BlockOps` first counts the
    ops (a walk of the block) and then walks it again."""
    out: list[Operation] = []
    op = block.first_op
    while op is not None:
        out.append(op)
        op = op.next_op
    return out


def walk_block(block: Block) -> list[Operation]:
    """`block.walk()` as a list, in the same order (what `walk` does for each block)."""
    out: list[Operation] = []
    _walk_into(block, out)
    return out


def _walk_into(block: Block, out: list[Operation]) -> None:
    inner = block.first_op
    while inner is not None:
        out.append(inner)
        for region in inner.regions:
            nested = region.first_block
            while nested is not None:
                _walk_into(nested, out)
                nested = nested.next_block
        inner = inner.next_op


#: This thread's walks while a pipeline runs (`shared_walks`), else none kept
_shared = threading.local()


@contextmanager
def shared_walks() -> Iterator[None]:
    """While the block runs, `walk` gives each op the walk it made for it first: the derive
    passes and gates set attributes, and never add, move or remove an op, so a kernel's walk
    made by one pass holds for the next (a pass pipeline walks each kernel ~20 times)."""
    saved = getattr(_shared, "walks", None)
    _shared.walks = {}
    try:
        yield
    finally:
        _shared.walks = saved


def ops_of(kernel: KernelOp, cls: type[Operation]) -> Iterator[Operation]:
    return (op for op in walk(kernel) if isinstance(op, cls))


def overwaited(ops: Iterator[Operation]) -> dict[BarrierOp, list[Operation]]:
    """The barriers of more than MAX_WAITED_MBARRIERS mbarriers that a wait (or a skip: it
    updates the phase bits a wait reads) among `ops` names, each with those ops: the lowering
    cannot wait on them (CAKE-H018), and the protocol model does not enumerate them."""
    got: dict[BarrierOp, list[Operation]] = {}
    for op in ops:
        b = op.barrier.owner if isinstance(op, (WaitOp, SkipOp)) else None
        if isinstance(b, BarrierOp) and b.count.value.data > MAX_WAITED_MBARRIERS:
            got.setdefault(b, []).append(op)
    return got


def same_value(a: SSAValue, b: SSAValue) -> bool:
    """Whether two index values are equal in every launch: one value, equal constants, or the
    same pure computation (arith, block ids, grid sizes, tensor extents) of equal operands."""
    if a is b:
        return True
    ca, cb = const_int(a), const_int(b)
    if ca is not None or cb is not None:
        return ca == cb
    x, y = a.owner, b.owner
    if (not isinstance(x, Operation) or type(x) is not type(y) or a.index != b.index
            or not isinstance(x, _PURE) or x.properties != y.properties
            or x.attributes != y.attributes or len(x.operands) != len(y.operands)):
        return False
    return all(same_value(p, q) for p, q in zip(x.operands, y.operands))


def exclusive(a: Operation, b: Operation) -> bool:
    """Whether `a` and `b` lie in different branches of one `cake.if` (never both run)."""
    arms: dict[Operation, Region | None] = {}
    op: Operation | None = a
    while op is not None:
        region = op.parent_region()
        parent = op.parent_op()
        if isinstance(parent, IfOp):
            arms[parent] = region
        op = parent
    op = b
    while op is not None:
        region = op.parent_region()
        parent = op.parent_op()
        if parent in arms and arms[parent] is not region:
            return True
        op = parent
    return False


def sym(op: Operation) -> str:
    name = op.properties.get("sym_name")
    return name.data if isinstance(name, StringAttr) else "?"


def line_of(op: Operation) -> int | None:
    loc = op.location
    return loc.line.data if isinstance(loc, FileLineColLoc) else None


def role_of(op: Operation) -> RoleOp | None:
    """The role whose `with` block contains `op` (None at kernel level)."""
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, OnRoleOp):
        parent = parent.parent_op()
    if parent is None:
        return None
    owner = parent.role.owner
    return owner if isinstance(owner, RoleOp) else None


def warps_of(role: RoleOp) -> list[int]:
    return list(role.warps.get_values())


# ---- attributes ------------------------------------------------------------------------------


def set_int(op: Operation, name: str, value: int) -> None:
    # i64 attributes hold two's complement: descriptors with bit 63 set read back negative.
    if value > (1 << 63) - 1:
        value -= 1 << 64
    op.attributes[name] = integer_attr(value) if type(value) is int else IntegerAttr(value, i64)


def set_str(op: Operation, name: str, value: str) -> None:
    op.attributes[name] = string_attr(value)


def set_ints(op: Operation, name: str, values: Sequence[int]) -> None:
    op.attributes[name] = i64_array(values)


def set_strs(op: Operation, name: str, values: Sequence[str]) -> None:
    op.attributes[name] = string_array(values)


def get_int(op: Operation, name: str) -> int | None:
    attr = op.attributes.get(name)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def get_u64(op: Operation, name: str) -> int | None:
    """A 64-bit descriptor attribute as the unsigned bit pattern."""
    value = get_int(op, name)
    return None if value is None else value & U64


def get_str(op: Operation, name: str) -> str | None:
    attr = op.attributes.get(name)
    return attr.data if isinstance(attr, StringAttr) else None


def get_ints(op: Operation, name: str) -> list[int] | None:
    attr = op.attributes.get(name)
    return list(attr.get_values()) if isinstance(attr, DenseArrayBase) else None


def get_strs(op: Operation, name: str) -> list[str] | None:
    attr = op.attributes.get(name)
    if not isinstance(attr, ArrayAttr):
        return None
    return [a.data for a in attr.data if isinstance(a, StringAttr)]


def attr_json(attr: Attribute) -> object:
    """A derived attribute as plain JSON (ints, strings, lists, dicts)."""
    from xdsl.dialects.builtin import DictionaryAttr

    if isinstance(attr, IntegerAttr):
        # i1 flags read back as -1/0 (signless, printed signed): show them as booleans.
        if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
            return bool(attr.value.data)
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return list(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return [attr_json(a) for a in attr.data]
    if isinstance(attr, DictionaryAttr):
        return {k: attr_json(v) for k, v in attr.data.items()}
    return str(attr)


# ---- index expressions -----------------------------------------------------------------------

# Python precedence, so printed expressions read back as the author would write them.
_INFIX: dict[type[Operation], tuple[str, int]] = {
    arith.AddiOp: ("+", 1), arith.SubiOp: ("-", 1), arith.MuliOp: ("*", 2),
    arith.FloorDivSIOp: ("//", 2), arith.RemSIOp: ("%", 2),
}
_CALLS: dict[type[Operation], str] = {
    arith.CeilDivSIOp: "lm.cdiv", arith.MinSIOp: "lm.min", arith.MaxSIOp: "lm.max",
}
#: ops whose result is a function of their operands and attributes alone (`same_value`)
_PURE = (*_INFIX, *_CALLS, arith.SelectOp, arith.CmpiOp, BlockIdOp, NumBlocksOp, SmCountOp,
         DimOp)


def const_int(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def expr(value: SSAValue) -> str:
    """`value` as an expression of .cake names: `k%3`, `m_tile`, `lm.cdiv(K, 64)`."""
    return _expr(value, 0)


def _expr(value: SSAValue, prec: int) -> str:
    const = const_int(value)
    if const is not None:
        return str(const)
    if value.name_hint:  # a name the author bound (loop variable, parameter, assignment)
        return value.name_hint
    owner = value.owner
    if isinstance(owner, Block):
        return "?"
    if type(owner) in _INFIX:
        op, p = _INFIX[type(owner)]
        text = f"{_expr(owner.operands[0], p)}{op}{_expr(owner.operands[1], p + 1)}"
        return f"({text})" if p < prec else text
    if type(owner) in _CALLS:
        args = ", ".join(_expr(o, 0) for o in owner.operands)
        return f"{_CALLS[type(owner)]}({args})"
    return _builtin_expr(owner)


def _builtin_expr(owner: Operation) -> str:
    if isinstance(owner, (BlockIdOp, NumBlocksOp)):
        name = "block_id" if isinstance(owner, BlockIdOp) else "num_blocks"
        return f"lm.{name}({owner.dim.value.data})"
    if isinstance(owner, SmCountOp):
        return "lm.sm_count()"
    if isinstance(owner, DimOp):
        return f"{_expr(owner.tensor, 3)}.shape[{owner.index.value.data}]"
    if isinstance(owner, arith.SelectOp):
        a, b = (_expr(o, 0) for o in owner.operands[1:])
        return f"({a} if {_expr(owner.operands[0], 0)} else {b})"
    return "?"


def scaled(coord: SSAValue, factor: int) -> str:
    """`coord × factor` as an expression, folding constants (`k*64`, `0`, `m_tile`)."""
    const = const_int(coord)
    if const is not None:
        return str(const * factor)
    if factor == 1:
        return expr(coord)
    return f"{_expr(coord, 2)}*{factor}"


def plus(base: str, offset: int) -> str:
    """`base + offset` for a printed expression; folds when `base` is a literal."""
    if offset == 0:
        return base
    if base.lstrip("-").isdigit():
        return str(int(base) + offset)
    return f"{base}+{offset}"
