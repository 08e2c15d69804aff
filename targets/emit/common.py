"""Lowerings shared by every backend: scalar arithmetic (`arith`), block and grid
queries, tensor extents, stage addresses, `lm.range` loops and `if`, and `.to(dtype)`;
plus the epilogue conversion traits of the stores. Backends start their tables from COMMON."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerType
from xdsl.ir import Operation

from cakec.dialects.cake import (
    BlockIdOp, ClusterRankOp, ConvertOp, DimOp, ForOp, IfOp, MmaOp, NumBlocksOp, SmCountOp,
    StageOp, StageStoreOp, TileAssignOp, TileStoreOp, TileType, TmaStoreOp, TransposeOp, ViewOp,
    dtype_name,
)
from cakec.targets.emit.cexpr import literal, paren, unparen
from cakec.targets.emit.emitter import KernelEmitter, Lowering
from cakec.targets.emit.unsupported import Unsupported

_DIM = ("x", "y", "z")
_CMP = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}  # arith.cmpi, signed
_INFIX = {arith.AddiOp: "+", arith.SubiOp: "-", arith.MuliOp: "*", arith.RemSIOp: "%",
          arith.AddfOp: "+", arith.SubfOp: "-", arith.MulfOp: "*", arith.DivfOp: "/"}
_BOOL = {arith.AndIOp: "&&", arith.OrIOp: "||", arith.XOrIOp: "!="}
_CALL = {arith.FloorDivSIOp: "cake_floordiv", arith.CeilDivSIOp: "cake_cdiv",
         arith.MinSIOp: "min", arith.MaxSIOp: "max"}
#: Epilogue conversion traits (targets/emit/support.cuh) per stored dtype.
#: The C type of a register accumulator's elements (f32; i32 for s8 MMAs).
ACC_CTYPE = {"f32": "float", "i32": "i32"}
OUT_TRAITS = {"bf16": "CakeOutBf16", "f16": "CakeOutF16", "f32": "CakeOutF32", "i32": "CakeOutI32"}


def scalar(em: KernelEmitter, op: Operation) -> None:
    """arith ops: C expressions (Python `//` and lm.cdiv through the support helpers)."""
    if isinstance(op, arith.ConstantOp):
        em.values[op.result] = literal(op.value)
        return
    vals = [em.val(o) for o in op.operands]
    t = type(op)
    if t in _INFIX:
        text = f"({vals[0]} {_INFIX[t]} {vals[1]})"
    elif t in _BOOL:
        text = f"({vals[0]} {_BOOL[t]} {vals[1]})"
    elif t in _CALL:
        text = f"{_CALL[t]}({unparen(vals[0])}, {unparen(vals[1])})"
    elif isinstance(op, arith.CmpiOp) and op.predicate.value.data in _CMP:
        text = f"({vals[0]} {_CMP[op.predicate.value.data]} {vals[1]})"
    elif isinstance(op, arith.SelectOp):
        text = f"({vals[0]} ? {vals[1]} : {vals[2]})"
    elif isinstance(op, arith.SIToFPOp):
        text = f"((float){vals[0]})"
    else:
        raise Unsupported(f"`{op.name}`")
    ty = op.results[0].type
    ctype = ("float" if not isinstance(ty, IntegerType) else
             "bool" if ty.width.data == 1 else "i32")
    em.bind(op, text, ctype)


def cluster_rank(em: KernelEmitter, op: ClusterRankOp) -> None:
    em.bind(op, "(i32)cake_cluster_ctarank()")


def block_index(em: KernelEmitter, op: BlockIdOp | NumBlocksOp) -> None:
    reg = "blockIdx" if isinstance(op, BlockIdOp) else "gridDim"
    em.bind(op, f"(i32){reg}.{_DIM[op.dim.value.data]}")


def sm_count(em: KernelEmitter, op: SmCountOp) -> None:
    raise Unsupported("reading `lm.sm_count()` in device code (it is a launch-time fact for "
                      "`lm.grid`)")


def tensor_dim(em: KernelEmitter, op: DimOp) -> None:
    em.bind(op, f"(i32){em.val(op.tensor)}.shape[{op.index.value.data}]")


def stage_addr(em: KernelEmitter, op: StageOp) -> None:
    """`view[s]`: the stage's shared address (view base + s × stage bytes)."""
    view = op.view.owner
    assert isinstance(view, ViewOp)
    stage_bytes = em.attr_int(view, "cake.stage_bytes")
    idx = em.val(op.index)
    base = em.views[view]
    em.values[op.result] = (base if idx == "0" else
                            f"({base} + (u32){paren(idx)} * {stage_bytes}u)")



def transpose(em: KernelEmitter, op: TransposeOp) -> None:
    """`view[s].T`: the same stage address; the MMA reads it MN-major (its descriptor)."""
    em.values[op.result] = em.val(op.source)


def for_loop(em: KernelEmitter, op: ForOp) -> None:
    em.source_comment(op)
    loop(em, op)


def loop(em: KernelEmitter, op: ForOp) -> None:
    """The C `for` of an `lm.range` loop, its body lowered inside (no source comment)."""
    lb, ub, step = (em.val(v) for v in (op.lb, op.ub, op.step))
    arg = op.body.block.args[0]
    with em.names.scope():
        iv = em.names.fresh(arg.name_hint or "i")
        em.values[arg] = iv
        inc = f"++{iv}" if step == "1" else f"{iv} += {unparen(step)}"
        with em.block(f"for (i32 {iv} = {unparen(lb)}; {iv} < {unparen(ub)}; {inc})"):
            em.ops(op.body.block)


def if_op(em: KernelEmitter, op: IfOp) -> None:
    em.source_comment(op)
    em.line(f"if ({unparen(em.val(op.cond))}) {{")
    for i, region in enumerate((op.then_region, op.else_region)):
        if i == 1:
            if region.block.ops.first is None:
                break
            em.line("} else {")
        em.depth += 1
        with em.names.scope():
            em.ops(region.block)
        em.depth -= 1
    em.line("}")


def convert(em: KernelEmitter, op: ConvertOp) -> None:
    """`tile.to(dtype)` emits nothing itself: the store, the assignment of a 16-bit register
    tile (or the wgmma reading it as its register A) that consumes it converts; a tile read
    as f32 or i32 (`p.to(lm.f32)` of a 16-bit tile) is converted wherever the evaluator reads
    it (targets/emit/tiles.py)."""
    if isinstance(op.source.type, TileType) and dtype_name(op.result.type.element_type) in (
            "f32", "i32"):
        return
    if not all(isinstance(u.operation, (TmaStoreOp, TileStoreOp, StageStoreOp, MmaOp,
                                        TileAssignOp)) for u in op.result.uses):
        raise Unsupported("using a converted tile other than in a store or as an MMA's A")


#: The lowerings every backend starts from: scalar arithmetic, grid/tensor queries, stage
#: addresses and control flow.
COMMON: dict[type[Operation], Lowering] = {
    **{t: scalar for t in (arith.ConstantOp, arith.AddiOp, arith.SubiOp, arith.MuliOp,
                           arith.RemSIOp, arith.FloorDivSIOp, arith.CeilDivSIOp, arith.MinSIOp,
                           arith.MaxSIOp, arith.CmpiOp, arith.SelectOp, arith.AndIOp,
                           arith.OrIOp, arith.XOrIOp, arith.AddfOp, arith.SubfOp, arith.MulfOp,
                           arith.DivfOp, arith.SIToFPOp)},
    BlockIdOp: block_index, NumBlocksOp: block_index, SmCountOp: sm_count, DimOp: tensor_dim,
    ClusterRankOp: cluster_rank,
    StageOp: stage_addr, TransposeOp: transpose, ForOp: for_loop, IfOp: if_op,
}
