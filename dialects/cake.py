"""The `cake` dialect: a kernel's schedule as the author declared it.

One op per surface construct: resources (SMEM pool and views, TMEM regions, register
tiles), roles and their regions, pipelines and mbarriers, loops, and the asynchronous
operations (TMA, waits, arrivals, MMA, fences). Scalar index arithmetic uses the
upstream `arith` dialect. Every op built from a .cake file carries its file:line:col.

Derivation passes annotate these ops with discardable `cake.*` attributes (offsets,
parities, byte counts, descriptors); the gates and the emitters read them.
"""

from __future__ import annotations

from abc import ABCMeta
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr, BFloat16Type, DenseArrayBase, FloatAttr, Float16Type, Float32Type, Float8E4M3FNType,
    Float8E5M2Type, FloatTF32Type, IntAttr, IntegerAttr, IntegerType, StringAttr, UnitAttr, i1,
    i32, i64,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments, IRDLOperation, irdl_attr_definition, irdl_op_definition,
    operand_def, opt_operand_def, opt_prop_def, prop_def, region_def, result_def,
    traits_def, var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator

# ---- the classes' metaclass -------------------------------------------------------------------


class _ByMro(ABCMeta):
    """The metaclass of Cake's IR classes: `isinstance` and `issubclass` by the class's MRO,
    in C (`type`'s own checks). ABCMeta's run a Python-level method for every object that is
    not an instance, and the gates, the protocol model and the emitter test op after op
    against op classes: those checks were 3-7 % of a verify (2026-12-05, the examples). No
    Cake class has virtual subclasses for ABCMeta's checks to find."""

    __instancecheck__ = type.__instancecheck__
    __subclasscheck__ = type.__subclasscheck__


class _Op(IRDLOperation, metaclass=_ByMro):
    """Base of Cake's ops (only for their metaclass)."""


class _Type(ParametrizedAttribute, TypeAttribute, metaclass=_ByMro):
    """Base of Cake's types (only for their metaclass)."""


# ---- element types -------------------------------------------------------------------------

#: Surface dtype name → (builtin type, size in bytes). The one place dtype facts live.
DTYPES: dict[str, tuple[Attribute, int]] = {
    "bf16": (BFloat16Type(), 2),
    "f16": (Float16Type(), 2),
    "f32": (Float32Type(), 4),
    "tf32": (FloatTF32Type(), 4),
    "e4m3": (Float8E4M3FNType(), 1),
    "e5m2": (Float8E5M2Type(), 1),
    "i8": (IntegerType(8), 1),
    "i32": (IntegerType(32), 4),
    # Predicate tiles (the result of a tile comparison); not a surface dtype (no `lm.i1`).
    "i1": (IntegerType(1), 1),
}


def dtype_attr(name: str) -> Attribute:
    return DTYPES[name][0]


def dtype_name(attr: Attribute) -> str:
    for name, (ty, _) in DTYPES.items():
        if ty == attr:
            return name
    raise KeyError(f"not a cake dtype: {attr}")


def dtype_bytes(attr: Attribute) -> int:
    return DTYPES[dtype_name(attr)][1]


SWIZZLES = ("none", "32b", "64b", "128b", "auto")


# ---- types ----------------------------------------------------------------------------------


class _ShapedType(_Type):
    """Common syntax `<128x64xbf16, key value, ...>` for the shaped Cake types."""

    shape: ArrayAttr[IntAttr]
    element_type: Attribute

    def dims(self) -> tuple[int, ...]:
        return tuple(d.data for d in self.shape.data)

    def num_elements(self) -> int:
        n = 1
        for d in self.dims():
            n *= d
        return n

    def num_bytes(self) -> int:
        return self.num_elements() * dtype_bytes(self.element_type)

    def _extra(self) -> list[tuple[str, str]]:
        return []

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "x".join(str(d) for d in self.dims()) + "x")
        printer.print_attribute(self.element_type)
        for key, value in self._extra():
            printer.print_string(f", {key} {value}")
        printer.print_string(">")

    @staticmethod
    def _parse_shape(parser: AttrParser) -> tuple[ArrayAttr[IntAttr], Attribute, dict[str, str]]:
        extra: dict[str, str] = {}
        with parser.in_angle_brackets():
            shape, elt = parser.parse_ranked_shape()
            while parser.parse_optional_punctuation(","):
                key = parser.parse_identifier()
                value = parser.parse_optional_integer()
                if value is None:
                    extra[key] = parser.parse_identifier()
                elif parser.parse_optional_keyword("b"):  # a swizzle span such as 128b
                    extra[key] = f"{value}b"
                else:
                    extra[key] = str(value)
        return ArrayAttr([IntAttr(d) for d in shape]), elt, extra


@irdl_attr_definition
class TensorType(_ShapedType):
    """A global-memory tensor parameter; dims are -1 (known at launch). `tma` marks
    tensors that TMA reads or writes (the runtime builds tensor maps for them)."""

    name = "cake.tensor"
    tma: IntAttr

    def __init__(self, rank: int, element_type: Attribute, tma: bool):
        super().__init__(ArrayAttr([IntAttr(-1)] * rank), element_type, IntAttr(int(tma)))

    def _extra(self) -> list[tuple[str, str]]:
        return [("tma", str(self.tma.data))]

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<" + "x".join("?" for _ in self.dims()) + "x")
        printer.print_attribute(self.element_type)
        printer.print_string(f", tma {self.tma.data}>")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        shape, elt, extra = cls._parse_shape(parser)
        return shape, elt, IntAttr(int(extra.get("tma", "0")))


@irdl_attr_definition
class ViewType(_ShapedType):
    """`stages` consecutive SMEM buffers of one shape inside a pool."""

    name = "cake.view"
    stages: IntAttr
    swizzle: StringAttr

    def __init__(self, shape: Sequence[int], element_type: Attribute, stages: int, swizzle: str):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type, IntAttr(stages),
                         StringAttr(swizzle))

    def _extra(self) -> list[tuple[str, str]]:
        return [("stages", str(self.stages.data)), ("swizzle", self.swizzle.data)]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        shape, elt, extra = cls._parse_shape(parser)
        return shape, elt, IntAttr(int(extra.get("stages", "1"))), StringAttr(
            extra.get("swizzle", "auto"))


@irdl_attr_definition
class StageType(_ShapedType):
    """One stage of a view (`view[s]`): an MMA or TMA operand."""

    name = "cake.stage"
    swizzle: StringAttr

    def __init__(self, shape: Sequence[int], element_type: Attribute, swizzle: str):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type, StringAttr(swizzle))

    def _extra(self) -> list[tuple[str, str]]:
        return [("swizzle", self.swizzle.data)]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        shape, elt, extra = cls._parse_shape(parser)
        return shape, elt, StringAttr(extra.get("swizzle", "auto"))


@irdl_attr_definition
class TmemType(_ShapedType):
    """A TMEM region: lanes × columns, holding an MMA accumulator (sm_100a/103a)."""

    name = "cake.tmem"

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        shape, elt, _ = cls._parse_shape(parser)
        return shape, elt


@irdl_attr_definition
class TileType(_ShapedType):
    """A register tile owned by one role: an MMA accumulator or an epilogue value."""

    name = "cake.tile"

    def __init__(self, shape: Sequence[int], element_type: Attribute):
        super().__init__(ArrayAttr([IntAttr(d) for d in shape]), element_type)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        shape, elt, _ = cls._parse_shape(parser)
        return shape, elt


@irdl_attr_definition
class PoolType(_Type):
    name = "cake.pool"


@irdl_attr_definition
class RoleType(_Type):
    name = "cake.role"


@irdl_attr_definition
class PipelineType(_Type):
    name = "cake.pipeline"


@irdl_attr_definition
class BarrierType(_Type):
    name = "cake.barrier"


def _i64(v: int) -> IntegerAttr:
    return IntegerAttr(v, i64)


def _ints(vs: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(vs))


# ---- kernel structure -----------------------------------------------------------------------


@irdl_op_definition
class KernelOp(_Op):
    """`@cake.schedule(...) def NAME(lm, params...)`: parameters are the entry block's
    arguments, named by `param_names`."""

    name = "cake.kernel"
    sym_name = prop_def(StringAttr)
    param_names = prop_def(ArrayAttr[StringAttr])
    target = opt_prop_def(StringAttr)
    #: `blocks_per_sm=`: the blocks one SM must hold at once (the launch bound's minimum)
    blocks_per_sm = opt_prop_def(IntegerAttr)
    #: `cluster=(x, y, z)`: the thread-block cluster shape (absent: no cluster)
    cluster = opt_prop_def(DenseArrayBase)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())


@irdl_op_definition
class GridOp(_Op):
    """`lm.grid(x, y, z)`: launch geometry (blocks per dimension)."""

    name = "cake.grid"
    dims = var_operand_def(i32)


@irdl_op_definition
class BlockIdOp(_Op):
    name = "cake.block_id"
    dim = prop_def(IntegerAttr)
    result = result_def(i32)


@irdl_op_definition
class NumBlocksOp(_Op):
    name = "cake.num_blocks"
    dim = prop_def(IntegerAttr)
    result = result_def(i32)


@irdl_op_definition
class ClusterRankOp(_Op):
    """`lm.cluster_rank()`: this block's rank in its cluster (%cluster_ctarank)."""

    name = "cake.cluster_rank"
    result = result_def(i32)


@irdl_op_definition
class ClusterSyncOp(_Op):
    """`lm.cluster_sync()`: every thread of every block of the cluster meets here (the
    kernel's last statement: no block exits while a peer may still reach its SMEM)."""

    name = "cake.cluster_sync"


@irdl_op_definition
class SmCountOp(_Op):
    """`lm.sm_count()`: multiprocessors on the launching device (for persistent grids)."""

    name = "cake.sm_count"
    result = result_def(i32)


@irdl_op_definition
class DimOp(_Op):
    """`T.shape[i]`: a tensor parameter's extent, known at launch."""

    name = "cake.dim"
    tensor = operand_def(TensorType)
    index = prop_def(IntegerAttr)
    result = result_def(i32)


@irdl_op_definition
class SmemOp(_Op):
    name = "cake.smem"
    sym_name = prop_def(StringAttr)
    bytes = prop_def(IntegerAttr)
    result = result_def(PoolType)


@irdl_op_definition
class ViewOp(_Op):
    """`pool.view(offset=, shape=, dtype=, stage=, swizzle=, reuses=)`. With `reuses`, the
    view lies inside the bytes of that earlier view, whose accesses the safety gate orders
    before its own (and back again around loops): views with live ranges."""

    name = "cake.view"
    sym_name = prop_def(StringAttr)
    pool = operand_def(PoolType)
    reuses = opt_operand_def(ViewType)
    offset = prop_def(IntegerAttr)
    result = result_def(ViewType)


@irdl_op_definition
class TmemOp(_Op):
    name = "cake.tmem"
    sym_name = prop_def(StringAttr)
    cols = prop_def(IntegerAttr)
    width = prop_def(IntegerAttr)
    result = result_def(TmemType)


@irdl_op_definition
class RegsOp(_Op):
    """`lm.regs(shape=, dtype=, role=)`: a register accumulator owned by `role`."""

    name = "cake.regs"
    sym_name = prop_def(StringAttr)
    role = operand_def(RoleType)
    result = result_def(TileType)


@irdl_op_definition
class RoleOp(_Op):
    name = "cake.role"
    sym_name = prop_def(StringAttr)
    warps = prop_def(DenseArrayBase)
    regs = opt_prop_def(IntegerAttr)
    result = result_def(RoleType)


@irdl_op_definition
class PipelineOp(_Op):
    name = "cake.pipeline"
    sym_name = prop_def(StringAttr)
    stages = prop_def(IntegerAttr)
    result = result_def(PipelineType)


@irdl_op_definition
class BarrierOp(_Op):
    """An array of `count` mbarriers, each completing a phase after `init_count` role events."""

    name = "cake.barrier"
    sym_name = prop_def(StringAttr)
    count = prop_def(IntegerAttr)
    init_count = prop_def(IntegerAttr)
    prod = var_operand_def(RoleType)
    cons = var_operand_def(RoleType)
    pipeline = opt_operand_def(PipelineType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    result = result_def(BarrierType)


@irdl_op_definition
class OnRoleOp(_Op):
    """`with ROLE:` — code that only the role's warps execute."""

    name = "cake.on_role"
    role = operand_def(RoleType)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())


@irdl_op_definition
class ForOp(_Op):
    """`for i in lm.range(lb, ub, step)`; the induction variable is the block argument."""

    name = "cake.for"
    lb = operand_def(i32)
    ub = operand_def(i32)
    step = operand_def(i32)
    body = region_def("single_block")
    traits = traits_def(NoTerminator())


@irdl_op_definition
class IfOp(_Op):
    """A uniform `if` (every thread of the role takes the same branch), or, when `cond` is a
    TileAnyOp, a per-warp one (each warp takes it or not; register arithmetic only)."""

    name = "cake.if"
    cond = operand_def(i1)
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(NoTerminator())


def per_warp(op: IfOp) -> bool:
    """Whether `op` is `if lm.any(pred):`, taken or not by each warp on its own."""
    return isinstance(op.cond.owner, TileAnyOp)


# ---- operations -----------------------------------------------------------------------------


@irdl_op_definition
class StageOp(_Op):
    """`view[s]`: one stage of a view."""

    name = "cake.stage"
    view = operand_def(ViewType)
    index = operand_def(i32)
    result = result_def(StageType)


@irdl_op_definition
class TransposeOp(_Op):
    """`view[s].T`: a stage stored [K, M] (or [K, N]) read as the [M, K] (or [N, K]) operand of
    an MMA, MN-major: the instruction reads it through the descriptor's transposed layout
    (wgmma imm-trans, tcgen05 a_major/b_major), no data moves."""

    name = "cake.transpose"
    source = operand_def(StageType)
    result = result_def(StageType)


def view_span(view: ViewOp) -> tuple[SSAValue, int, int]:
    """(pool, first byte, byte past the last) of every stage of `view` (derive-smem's stage
    stride once it ran, the tile's bytes before)."""
    t = view.result.type
    assert isinstance(t, ViewType)
    nbytes = view.attributes.get("cake.stage_bytes")
    stride = nbytes.value.data if isinstance(nbytes, IntegerAttr) else t.num_bytes()
    start = view.offset.value.data
    return view.pool, start, start + t.stages.data * stride


def written_view(op: Operation) -> ViewOp | None:
    """The view whose bytes `op` writes: a `store` into a stage, a TMA load, a copy_load."""
    if isinstance(op, StageStoreOp):
        stage = op.dest.owner
        view = stage.view.owner if isinstance(stage, StageOp) else None
    elif isinstance(op, (TmaLoadOp, CopyLoadOp)):
        view = op.view.owner
    else:
        return None
    return view if isinstance(view, ViewOp) else None


def reuse_related(a: ViewOp, b: ViewOp) -> bool:
    """Whether one of two distinct views reuses the other's bytes (`reuses=`, transitively,
    or both the same view's): the safety gate orders their accesses as one buffer's."""
    return a is not b and reuse_root(a) is reuse_root(b)


def reuse_root(view: ViewOp) -> ViewOp:
    """The view whose bytes `view` reuses, followed to the first that reuses none."""
    while view.reuses is not None and isinstance(view.reuses.owner, ViewOp):
        view = view.reuses.owner
    return view


def views_overlap(a: ViewOp, b: ViewOp) -> bool:
    """Whether two views share a byte of SMEM (the same pool, intersecting spans)."""
    (pa, sa, ea), (pb, sb, eb) = view_span(a), view_span(b)
    return pa == pb and sa < eb and sb < ea


def stage_source(v: SSAValue) -> tuple[SSAValue, bool]:
    """The stage an MMA operand reads (`view[s]`, through a `.T`) and whether it is
    transposed (read MN-major)."""
    if isinstance(v.owner, TransposeOp):
        return v.owner.source, True
    return v, False


@irdl_op_definition
class TmaLoadOp(_Op):
    """`view.tma_load(T, coords=, stage=, barrier=, fill=)`: an async copy of one box into
    `view[stage]`, completing its bytes on `barrier[stage]`. `coords` are tile
    coordinates, outermost first; elements outside T read 0, or NaN with fill="nan"."""

    name = "cake.tma_load"
    view = operand_def(ViewType)
    tensor = operand_def(TensorType)
    coords = var_operand_def(i32)
    stage = operand_def(i32)
    barrier = operand_def(BarrierType)
    fill = opt_prop_def(StringAttr)
    #: `multicast=`: the cluster axes whose blocks all receive the box (one of them issues it)
    multicast = opt_prop_def(DenseArrayBase)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class CopyLoadOp(_Op):
    """`view.copy_load(T, coords=, stage=, barrier=)`: every thread of the role copies 16-byte
    chunks of one tile into `view[stage]` (cp.async, zero-filled outside T), then arrives on
    `barrier[stage]` when its copies land; `tma_load`'s contract without TMA (sm_80 onwards)."""

    name = "cake.copy_load"
    view = operand_def(ViewType)
    tensor = operand_def(TensorType)
    coords = var_operand_def(i32)
    stage = operand_def(i32)
    barrier = operand_def(BarrierType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


#: Asynchronous fills of a view stage that complete on a barrier (every analysis treats
#: them alike; only the instructions and the arrivals per event differ).
ASYNC_LOADS = (TmaLoadOp, CopyLoadOp)


@irdl_op_definition
class TmaStoreOp(_Op):
    """`T.tma_store(tile, coords=)`: store a register tile to a global tile."""

    name = "cake.tma_store"
    tensor = operand_def(TensorType)
    value = operand_def(TileType)
    coords = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class TmaStoreStageOp(_Op):
    """`T.tma_store(view[s], coords=)`: one TMA copy (one per swizzle column block) of a staged
    SMEM tile to the global tile at `coords`, clipped at the tensor's edges. Asynchronous: the
    copy reads the stage until its role next writes those bytes, or arrives for a role that
    does (the emitter waits for the role's store groups there, and at the role's end)."""

    name = "cake.tma_store_stage"
    tensor = operand_def(TensorType)
    source = operand_def(StageType)
    coords = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class WaitOp(_Op):
    """`lm.wait(b, stage=s)`: wait for the next phase of `b[s]` this role has not consumed."""

    name = "cake.wait"
    barrier = operand_def(BarrierType)
    stage = operand_def(i32)


@irdl_op_definition
class SkipOp(_Op):
    """`lm.skip(b, stage=s, count=n)`: this role passes over the next phase of `b[s]`,
    `b[(s + 1) % count]`, ... (`n` consecutive ring positions) without waiting: another
    consumer of the ring waits for them (ping-pong consumers taking turns on one ring)."""

    name = "cake.skip"
    barrier = operand_def(BarrierType)
    stage = operand_def(i32)
    count = operand_def(i32)


@irdl_op_definition
class ArriveOp(_Op):
    """`lm.arrive(b, stage=s)`: one arrival of this role on `b[s]`; with `multicast=` on
    `b[s]` of every block of the cluster along those axes (this one included)."""

    name = "cake.arrive"
    barrier = operand_def(BarrierType)
    stage = operand_def(i32)
    multicast = opt_prop_def(DenseArrayBase)


@irdl_op_definition
class CommitOp(_Op):
    """`lm.commit(b, stage=s)`: arrive on `b[s]` once this role's MMAs so far completed; with
    `multicast=` on `b[s]` of every block of the cluster along those axes (this one included)."""

    name = "cake.commit"
    barrier = operand_def(BarrierType)
    stage = operand_def(i32)
    multicast = opt_prop_def(DenseArrayBase)


@irdl_op_definition
class FenceProxyOp(_Op):
    name = "cake.fence_proxy"


@irdl_op_definition
class MmaOp(_Op):
    """`lm.mma(acc, a, b, init=)`: acc[M,N] (+)= a[M,K] · b[N,K]ᵀ, asynchronous. `a` is an
    SMEM stage, or a 16-bit register tile in its role's accumulator layout (wgmma's register
    A: the tile's registers are packed into A fragments as the wgmma is issued)."""

    name = "cake.mma"
    acc = operand_def(TmemType | TileType)
    a = operand_def(StageType | TileType)
    b = operand_def(StageType)
    init = operand_def(i1)


@irdl_op_definition
class ConvertOp(_Op):
    """`tile.to(dtype)`: elementwise conversion of a register tile (or TMEM load)."""

    name = "cake.convert"
    source = operand_def(TileType | TmemType)
    result = result_def(TileType)


# ---- register tiles: vectors, broadcasting arithmetic, reductions ------------------------------


@irdl_op_definition
class TileLoadOp(_Op):
    """`T.load(coords=, shape=, dtype=, other=)`: a vector (shape (1, L) or (L, 1), or a
    (1, 1) scalar) read from a run of L elements along T's last dimension, or an (M, N) block
    of T's last two dimensions; elements outside T's shape read `other`."""

    name = "cake.tile_load"
    tensor = operand_def(TensorType)
    coords = var_operand_def(i32)
    other = prop_def(FloatAttr)
    result = result_def(TileType)


@irdl_op_definition
class TileStoreOp(_Op):
    """`T.store(v, coords=)`: an (L, 1) or (1, L) vector written to a run along T's last
    dimension, or an (M, N) tile to the tile of a rank-2 T (masked)."""

    name = "cake.tile_store"
    tensor = operand_def(TensorType)
    value = operand_def(TileType)
    coords = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class SplitStoreOp(_Op):
    """`T.split_store(partial, coords=, part=, parts=, workspace=W, counters=L)`: one of
    `parts` f32 partial sums of the (M, N) tile of a rank-2 T at `coords`. The partial goes
    to W[part] (f32, rank 3), then the CTA arrives on L[tile] (i32, one counter per tile of
    T); the CTA that arrives last adds W[0..parts-1] in that order, stores the sum converted
    to T's dtype (masked) and resets L[tile] to 0 (docs/language.md, "Split-K"). With
    `transpose`, the (M, N) partial is the (N, M) tile of T (its element (i, j) is T's
    (j, i) of the tile)."""

    name = "cake.split_store"
    transpose = opt_prop_def(UnitAttr)
    tensor = operand_def(TensorType)
    value = operand_def(TileType)
    workspace = operand_def(TensorType)
    counters = operand_def(TensorType)
    part = operand_def(i32)
    parts = operand_def(i32)
    coords = var_operand_def(i32)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)


@irdl_op_definition
class TileBinaryOp(_Op):
    """Elementwise `lhs KIND rhs` on f32 tiles with numpy broadcasting; either side may be
    an f32 scalar. KIND is add, sub, mul, div, min or max (TILE_BINARY; min and max also of
    i32 tiles and i32 scalars), or `and`/`or` of two i1 predicate tiles."""

    name = "cake.tile_binary"
    kind = prop_def(StringAttr)
    lhs = operand_def(TileType | Float32Type | IntegerType)
    rhs = operand_def(TileType | Float32Type | IntegerType)
    result = result_def(TileType)


@irdl_op_definition
class TileUnaryOp(_Op):
    """Elementwise `KIND(x)` of an f32 tile (TILE_UNARY: exp2, exp, ..., gelu, silu)."""

    name = "cake.tile_unary"
    kind = prop_def(StringAttr)
    operand = operand_def(TileType)
    result = result_def(TileType)


@irdl_op_definition
class TileCmpOp(_Op):
    """Elementwise `lhs PRED rhs` (TILE_CMP: lt, le, gt, ge, eq, ne) of two f32 or two i32
    operands (tiles or scalars, broadcasting): an i1 predicate tile."""

    name = "cake.tile_cmp"
    predicate = prop_def(StringAttr)
    lhs = operand_def(TileType | Float32Type | IntegerType)
    rhs = operand_def(TileType | Float32Type | IntegerType)
    result = result_def(TileType)


@irdl_op_definition
class TileSelectOp(_Op):
    """`lm.where(pred, a, b)`: elementwise `pred ? a : b`, broadcasting; a and b have one
    dtype (f32 or i32; either may be a scalar of it)."""

    name = "cake.tile_select"
    pred = operand_def(TileType)
    lhs = operand_def(TileType | Float32Type | IntegerType)
    rhs = operand_def(TileType | Float32Type | IntegerType)
    result = result_def(TileType)


@irdl_op_definition
class TileIndexOp(_Op):
    """`lm.row_index(t, base=)` (axis 0: an (M, 1) i32 tile) or `lm.col_index(t, base=)`
    (axis 1: (1, N)): each element's row or column within the tile, plus `base`."""

    name = "cake.tile_index"
    axis = prop_def(IntegerAttr)
    base = operand_def(i32)
    result = result_def(TileType)


@irdl_op_definition
class TileReduceOp(_Op):
    """`t.KIND(axis=1)` (TILE_REDUCE: sum, max, min, argmax, argmin): each row of an (M, N)
    f32 tile reduced to an (M, 1) tile, f32 (sum, max, min) or i32 (the column of the first
    extreme value); `axis=0` (sum, max, min): each column to a (1, N) f32 tile."""

    name = "cake.tile_reduce"
    kind = prop_def(StringAttr)
    axis = prop_def(IntegerAttr)
    source = operand_def(TileType)
    result = result_def(TileType)


@irdl_op_definition
class TileAnyOp(_Op):
    """`if lm.any(pred):` — whether `pred` (an i1 predicate tile) is true at any element a
    warp holds, the same in every lane of that warp: the condition of a per-warp branch
    (IfOp), whose body the frontend limits to register-tile arithmetic (CAKE-T011)."""

    name = "cake.tile_any"
    pred = operand_def(TileType)
    result = result_def(i1)


@irdl_op_definition
class TileAssignOp(_Op):
    """`r = value` where `r` names an `lm.regs` tile: the register tile's new contents (a
    running max, a rescaled accumulator; a scalar fills every element), read by every later
    use of `r`."""

    name = "cake.tile_assign"
    dest = operand_def(TileType)
    value = operand_def(TileType | Float32Type | IntegerType)


#: Kinds of the elementwise and reduction ops (the frontend's spellings map onto these).
TILE_BINARY = ("add", "sub", "mul", "div", "min", "max", "and", "or")
TILE_UNARY = ("exp2", "exp", "log2", "log", "sqrt", "rsqrt", "abs", "neg", "tanh", "sigmoid",
              "relu", "gelu", "silu")
TILE_CMP = ("lt", "le", "gt", "ge", "eq", "ne")
TILE_REDUCE = ("sum", "max", "min", "argmax", "argmin")
#: Register-tile ops that compute a value and have no other effect: the emitters evaluate
#: them where they are consumed (targets/emit/tiles.py).
PURE_TILE_OPS = (TileBinaryOp, TileUnaryOp, TileCmpOp, TileSelectOp, TileIndexOp)


@irdl_op_definition
class StageLoadOp(_Op):
    """`view[s].load()`: a (1, L) or (L, 1) f32/i32 stage read into a register vector, or an
    (M, N) bf16/f16 stage into a register tile (a synchronous read by every thread of the
    role, e.g. per-column terms or an epilogue's residual tile a TMA load brought)."""

    name = "cake.stage_load"
    source = operand_def(StageType)
    result = result_def(TileType)


@irdl_op_definition
class StageStoreOp(_Op):
    """`view[s].store(tile)`: every thread of the role writes its elements of a register tile
    (of the stage's shape and dtype) into the stage, at the addresses the view's layout (its
    swizzle) gives them, so a later MMA or TMA store reads them. The write is by the generic
    proxy: an async-proxy reader needs `lm.fence_proxy()` after it (verify-consistency)."""

    name = "cake.stage_store"
    dest = operand_def(StageType)
    value = operand_def(TileType)


@irdl_op_definition
class SumSqOp(_Op):
    """`lm.sum_sq(stage, axis=1)`: Σ x² along each row of an SMEM stage, an (M, 1) f32 tile."""

    name = "cake.sum_sq"
    source = operand_def(StageType)
    axis = prop_def(IntegerAttr)
    result = result_def(TileType)


@irdl_op_definition
class ArgminOp(_Op):
    """`lm.argmin(value, index, source, axis=1, base=, init=)`: merge each row's minimum of
    `source` (column c named base + c) into the running (value, index) register tiles;
    ties go to the lowest index; init=True starts the rows afresh."""

    name = "cake.argmin"
    value = operand_def(TileType)
    index = operand_def(TileType)
    source = operand_def(TileType)
    base = operand_def(i32)
    init = operand_def(i1)
    axis = prop_def(IntegerAttr)


def tile_leaves(v: SSAValue) -> list[SSAValue]:
    """The values an expression of pure tile ops (and `.to` of a tile) is built from: the
    tiles, TMEM reads and scalars at its leaves, an index tile counting as one."""
    op = v.owner
    if isinstance(op, (TileBinaryOp, TileUnaryOp, TileCmpOp, TileSelectOp)) or (
            isinstance(op, ConvertOp) and isinstance(op.source.type, TileType)):
        return [leaf for o in op.operands for leaf in tile_leaves(o)]
    return [v]


#: Ops one thread can execute for its whole role: a role made only of these (and scalar
#: arithmetic) runs on one elected thread; any other op makes every thread of the role run
#: it. The emitters and derive-barriers' arrival counts share this rule.
SINGLE_THREAD_OPS = (ForOp, IfOp, WaitOp, SkipOp, ArriveOp, TmaLoadOp, TmaStoreStageOp,
                     FenceProxyOp, BlockIdOp, NumBlocksOp, DimOp, StageOp, TransposeOp, CommitOp)


def runs_single_thread(on_roles: Sequence[OnRoleOp]) -> bool:
    """Whether a role whose `with` blocks are `on_roles` runs on one elected thread."""
    known = _SINGLE_THREAD_TYPES
    # Every op of the blocks, in any order: a stack of blocks and their ops' links (xDSL's
    # walk is a generator per op, region and block).
    blocks = [on.body.block for on in on_roles]
    while blocks:
        op = blocks.pop().first_op
        while op is not None:
            single = known.get(type(op))
            if single is None:
                single = known[type(op)] = issubclass(type(op), SINGLE_THREAD_OPS)
            if not (single or op.name.startswith("arith.")):
                return False
            for region in op.regions:
                blocks.extend(region.blocks)
            op = op.next_op
    return True


#: per op class, whether it is one of SINGLE_THREAD_OPS (`isinstance` against the tuple, an
#: ABC check per class of it for every op, was a sixth of the emitter's time)
_SINGLE_THREAD_TYPES: dict[type, bool] = {}


Cake = Dialect(
    "cake",
    [
        KernelOp, GridOp, BlockIdOp, NumBlocksOp, SmCountOp, DimOp, SmemOp, ViewOp, TmemOp,
        ClusterRankOp, ClusterSyncOp, RegsOp, RoleOp, PipelineOp, BarrierOp, OnRoleOp, ForOp, IfOp, StageOp, TransposeOp, TmaLoadOp,
        CopyLoadOp, TmaStoreOp, TmaStoreStageOp, WaitOp, SkipOp, ArriveOp, CommitOp, FenceProxyOp,
        MmaOp, ConvertOp,
        TileLoadOp, TileStoreOp, SplitStoreOp, TileBinaryOp, TileUnaryOp, TileCmpOp, TileSelectOp,
        TileIndexOp, TileReduceOp, TileAnyOp, TileAssignOp, StageLoadOp, StageStoreOp, SumSqOp,
        ArgminOp,
    ],
    [TensorType, ViewType, StageType, TmemType, TileType, PoolType, RoleType, PipelineType,
     BarrierType],
)
